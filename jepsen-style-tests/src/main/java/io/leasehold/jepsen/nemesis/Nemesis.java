package io.leasehold.jepsen.nemesis;

import java.util.Optional;

/**
 * A fault: {@link #start} injects it, {@link #heal} undoes it. Both return a line for the timeline
 * saying what was done to which node. A nemesis this machine cannot run says why in {@link
 * #unsupportedReason}, and the run reports it as skipped — never silently.
 */
public interface Nemesis {
  /**
   * A short kind name, e.g. {@code kill}, {@code pause}, {@code partition}: faults are counted per
   * kind.
   */
  String kind();

  /** The name of this variant, e.g. {@code kill-leader}. */
  String name();

  default Optional<String> unsupportedReason() {
    return Optional.empty();
  }

  String start(NemesisContext ctx);

  String heal(NemesisContext ctx);
}
