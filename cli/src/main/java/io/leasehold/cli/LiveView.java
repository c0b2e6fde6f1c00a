package io.leasehold.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;

/**
 * A view that follows something until interrupted ({@code --watch}). On a terminal each frame is
 * redrawn in place (the screen cleared, a title line with the time on top); otherwise a frame is
 * printed only when it changed, tables parted by a blank line, and with {@code -o json} one compact
 * JSON value per line (JSON Lines).
 */
public final class LiveView {
  private static final String CLEAR = "\033[H\033[2J";

  private final PrintWriter out;
  private final boolean json;
  private final boolean terminal;
  private final String title;
  private Object shown;
  private boolean any;

  public LiveView(PrintWriter out, OutputFormat format, boolean terminal, String title) {
    this.out = Objects.requireNonNull(out, "out");
    this.json = format == OutputFormat.JSON;
    this.terminal = terminal && !json;
    this.title = title;
  }

  /**
   * Shows a frame. {@code key} is what counts as a change: a frame with the key shown last is
   * printed again only on a terminal (where its other values are refreshed in place).
   *
   * @param jsonValue the frame as JSON (an object or an array)
   * @param text the frame for people, ending with a newline
   * @param key what must differ for the frame to count as a change
   */
  public void show(Object jsonValue, String text, Object key) {
    boolean changed = !any || !Objects.equals(key, shown);
    shown = key;
    if (terminal) {
      out.print(CLEAR + title + "   " + Human.time(Instant.now()) + "\n\n" + text);
    } else if (changed && json) {
      out.println(Json.compact(jsonValue));
    } else if (changed) {
      out.print((any ? "\n" : "") + text);
    }
    any = true;
    out.flush();
  }

  /**
   * Whether stdout, where the view goes, is a terminal (Linux says where fd 1 points; elsewhere the
   * console is the best guess).
   */
  public static boolean stdoutIsTerminal() {
    try {
      String d = Files.readSymbolicLink(Path.of("/proc/self/fd/1")).toString();
      return d.startsWith("/dev/pts/") || d.startsWith("/dev/tty") || d.equals("/dev/console");
    } catch (IOException | UnsupportedOperationException | SecurityException noProc) {
      return System.console() != null;
    }
  }
}
