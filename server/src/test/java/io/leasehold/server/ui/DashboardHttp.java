package io.leasehold.server.ui;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The dashboard's HTTP endpoints as a test reads them: JSON bodies and Server-Sent Event streams.
 */
final class DashboardHttp {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  record Reply(int status, JsonObject body) {}

  private DashboardHttp() {}

  static URI uri(LeaseholdNode node, String path) {
    return URI.create("http://127.0.0.1:" + node.metricsPort().orElseThrow() + path);
  }

  static Reply get(LeaseholdNode node, String path) {
    return get(node, path, Optional.empty());
  }

  static Reply get(LeaseholdNode node, String path, Optional<String> token) {
    HttpResponse<String> r =
        TestCluster.httpGet(
            node,
            path,
            b -> {
              token.ifPresent(t -> b.header("Authorization", "Bearer " + t));
              return b.timeout(Duration.ofSeconds(15));
            });
    return new Reply(r.statusCode(), JsonParser.parseString(r.body()).getAsJsonObject());
  }

  /** An open event stream: its {@code data:} lines, and whether the node said it is subscribed. */
  static final class Stream implements AutoCloseable {
    final BlockingQueue<String> data = new LinkedBlockingQueue<>();
    final int status;
    private final java.io.InputStream body;
    volatile boolean ready;

    Stream(LeaseholdNode node, String path) throws IOException, InterruptedException {
      HttpResponse<java.io.InputStream> r =
          HTTP.send(
              HttpRequest.newBuilder(uri(node, path)).build(),
              HttpResponse.BodyHandlers.ofInputStream());
      status = r.statusCode();
      body = r.body();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
                  String line;
                  String event = "message";
                  while ((line = in.readLine()) != null) {
                    if (line.startsWith("event: ")) {
                      event = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                      if (event.equals("ready")) {
                        ready = true;
                      } else if (event.equals("message")) {
                        data.add(line.substring(6));
                      }
                    } else if (line.isEmpty()) {
                      event = "message";
                    }
                  }
                } catch (IOException e) {
                  // Closed.
                }
              },
              "dashboard-test-sse");
      reader.setDaemon(true);
      reader.start();
    }

    /** The next event whose JSON contains {@code text}, within {@code timeout}. */
    Optional<JsonObject> next(String text, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        String d =
            data.poll(
                Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
        if (d != null && d.contains(text)) {
          return Optional.of(JsonParser.parseString(d).getAsJsonObject());
        }
      }
      return Optional.empty();
    }

    @Override
    public void close() throws IOException {
      body.close();
    }
  }
}
