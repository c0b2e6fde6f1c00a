package io.leasehold.server.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser: Debian's headless Chromium loads {@code /ui} of a running
 * three-node cluster, shows a lease the test acquires with its countdown moving, and the new leader
 * after the old one is stopped. Screenshots of each page go to {@code
 * target/dashboard-screenshots/}. Skipped where chromium or chromedriver is not installed.
 */
class DashboardBrowserTest {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

  @TempDir static Path dir;
  static TestCluster cluster;
  static WebDriver browser;

  @BeforeAll
  static void start() throws IOException {
    Assumptions.assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
        "chromium or chromedriver is not installed (apt-get install chromium chromium-driver): the browser test is skipped");
    cluster = TestCluster.start(3, dir.resolve("data"), b -> b.metricsPort(0));
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        "--user-data-dir=" + Files.createDirectories(dir.resolve("chromium-profile")));
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    browser = new ChromeDriver(service, options);
    Files.createDirectories(SCREENSHOTS);
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static String text(By by) {
    return browser.findElement(by).getText();
  }

  private static WebDriverWait within(Duration d) {
    return new WebDriverWait(browser, d, Duration.ofMillis(100));
  }

  private static void screenshot(String name) throws IOException {
    File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
    Files.copy(
        shot.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void aLeaseItsCountdownAndANewLeaderShowOnThePages() throws Exception {
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode watched = cluster.followers().get(0);
    browser.get("http://127.0.0.1:" + watched.metricsPort().orElseThrow() + "/ui/#cluster");
    within(Duration.ofSeconds(15)).until(d -> text(By.id("leader")).equals(leader.id()));
    within(Duration.ofSeconds(10))
        .until(d -> d.findElements(By.cssSelector("tr[data-member]")).size() == 3);
    // A follower's page shows every member healthy, each as it reports itself.
    within(Duration.ofSeconds(10))
        .until(d -> d.findElements(By.cssSelector("tr[data-member] td.health-OK")).size() == 3);
    screenshot("cluster");

    assertEquals(
        Outcome.GRANTED,
        cluster
            .leases(leader.id())
            .acquire(Requests.acquire("browser/lease-1", "worker-1", 60))
            .getOutcome());
    browser.findElement(By.id("nav-leases")).click();
    By row = By.cssSelector("tr[data-name='browser/lease-1']");
    within(Duration.ofSeconds(10)).until(d -> !d.findElements(row).isEmpty());
    WebElement remaining = browser.findElement(row).findElement(By.className("remaining"));
    within(Duration.ofSeconds(5)).until(d -> !remaining.getText().isEmpty());
    String first = remaining.getText();
    within(Duration.ofSeconds(5))
        .until(
            d ->
                !browser
                    .findElement(row)
                    .findElement(By.className("remaining"))
                    .getText()
                    .equals(first));
    assertTrue(browser.findElement(row).getText().contains("worker-1"));
    screenshot("leases");

    for (int k = 0; k < 32; k++) {
      cluster
          .leases(leader.id())
          .acquire(Requests.acquire("jobs/grid/p/" + k, "worker-" + (k % 3), 60));
    }
    browser.findElement(By.id("nav-routes")).click();
    browser.findElement(By.id("partition-group")).sendKeys("jobs/grid");
    browser.findElement(By.cssSelector("#page-routes form button")).click();
    within(Duration.ofSeconds(10))
        .until(d -> d.findElements(By.cssSelector(".grid .cell")).size() == 256);
    screenshot("routes");

    browser.findElement(By.id("nav-events")).click();
    within(Duration.ofSeconds(10))
        .until(d -> text(By.cssSelector("#page-events form span")).equals("live"));
    cluster.leases(leader.id()).acquire(Requests.acquire("browser/evented", "worker-2", 60));
    within(Duration.ofSeconds(10))
        .until(
            d ->
                d.findElements(By.cssSelector("#page-events tr.event")).stream()
                    .anyMatch(e -> e.getText().contains("browser/evented")));
    screenshot("events");

    browser.findElement(By.id("nav-charts")).click();
    within(Duration.ofSeconds(15))
        .until(d -> d.findElements(By.cssSelector("#charts canvas")).size() >= 6);
    screenshot("charts");

    browser.findElement(By.id("nav-cluster")).click();
    long stopped = System.nanoTime();
    cluster.stopNode(leader.id());
    within(Duration.ofSeconds(10))
        .until(
            d -> {
              String shown = text(By.id("leader"));
              return !shown.equals(leader.id()) && !shown.equals("none") && !shown.isEmpty();
            });
    long seconds = (System.nanoTime() - stopped) / 1_000_000_000L;
    assertNotEquals(leader.id(), text(By.id("leader")));
    assertTrue(seconds < 10, "the new leader showed after " + seconds + " s");
    within(Duration.ofSeconds(10))
        .until(
            d ->
                !d.findElements(
                        By.cssSelector(
                            "tr[data-member='" + leader.id() + "'] td.health-UNREACHABLE"))
                    .isEmpty());
    screenshot("cluster-after-failover");
  }
}
