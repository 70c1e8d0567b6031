package io.pglock.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pglock.LockHandle;
import io.pglock.queue.JobRequest;
import io.pglock.testing.Await;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TimeoutException;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real headless Chromium over a real fleet: what each page shows, what each
 * button changes in the database, the refusals (read-only, no anti-forgery token), the live
 * updates, and the screenshots of the docs (docs/images/dashboard-*.png).
 *
 * <p>Debian's chromium and chromium-driver are used as installed ({@code .ci/run} installs them);
 * nothing is ever downloaded: the driver's path is given, so Selenium Manager never runs. The
 * tests run in order only so that the screenshots come out the same: the pages before the
 * actions, the action log last. Each test sets up what it acts on.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  /** Where the docs want the screenshots too, when set (the pom forwards it from the command line). */
  private static final String SCREENSHOTS = "pglock.dashboard.screenshots";
  /** Long: on a saturated 2-core machine a page with its queries, or Chromium itself, can be slow. */
  private static final Duration WAIT = Duration.ofSeconds(60);
  /**
   * Both dashboards sign tokens with this secret, as instances behind one URL would: a token the
   * main dashboard gave is then valid on the read-only one, so what refuses the read-only one's
   * forged form is its being read-only, not the token.
   */
  private static final byte[] SECRET = UUID.randomUUID().toString().getBytes(StandardCharsets.US_ASCII);

  private static DashboardFleet fleet;
  /** The fleet's namespace. */
  private static String ns;
  private static DashboardServer server;
  private static DashboardServer readOnly;
  private static Path profile;
  private static ChromeDriver driver;
  private static WebDriverWait wait;

  @BeforeAll
  static void start() throws Exception {
    if (!browserInstalled()) {
      return; // each test says why it is skipped: surefire shows nothing for a class skipped as a whole
    }
    // The docs' screenshots show a plain namespace; other runs take one of their own (see DashboardFleet).
    fleet = new DashboardFleet(System.getProperty(SCREENSHOTS, "").isBlank() ? null : "shop");
    ns = fleet.namespace;
    fleet.populate();
    server = fleet.dashboard().csrfSecret(SECRET).build().serve(new InetSocketAddress("127.0.0.1", 0));
    readOnly = fleet.dashboard().csrfSecret(SECRET).readOnly(true).build()
        .serve(new InetSocketAddress("127.0.0.1", 0));
    profile = Files.createTempDirectory("pglock-chromium-");
    driver = chromium(profile);
    wait = new WebDriverWait(driver, WAIT);
    wait.ignoring(StaleElementReferenceException.class);
  }

  @BeforeEach
  void needsTheBrowser() {
    assumeTrue(browserInstalled(), "Chromium or its driver is missing (" + CHROMIUM + ", " + CHROMEDRIVER
        + "): install the Debian packages chromium and chromium-driver, as .ci/run does");
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (driver != null) {
        driver.quit(); // ends chromedriver and every Chromium process it started
      }
    } finally {
      if (readOnly != null) {
        readOnly.close();
      }
      if (server != null) {
        server.close();
      }
      if (fleet != null) {
        fleet.close();
      }
      if (profile != null) {
        deleteTree(profile);
      }
    }
  }

  @Test
  @Order(1)
  void theOverviewShowsNodesLeadersQueuesAndTrouble() throws IOException {
    open("/");
    shows(By.id("nodes"), "alpha", "beta");
    shows(By.id("leaders"), ns + " / billing");
    shows(By.id("queues"), DashboardFleet.QUEUE);
    shows(By.id("troubled-tasks"), ns + " / flaky", "last run failed");
    shows(By.id("losses"), ns + " / audit", "audit ledger is unbalanced");
    assertThat(driver.findElement(By.cssSelector("nav a.current")).getText()).isEqualTo("Overview");
    screenshot("overview");
  }

  @Test
  @Order(2)
  void theLocksPageShowsTheHolderAndTheWaiter() throws IOException {
    open("/locks");
    shows(lockRow("held", ns + " / inventory", "alpha"), "exclusive", "session");
    shows(lockRow("waiting", ns + " / inventory", "beta"), "exclusive", "waiting");
    screenshot("locks");
  }

  @Test
  @Order(3)
  void theHistoryFilteredToFailuresShowsTheFailedHold() throws IOException {
    open("/history");
    WebElement failedOnly = driver.findElement(By.cssSelector("form.filter input[name=failed]"));
    if (!failedOnly.isSelected()) {
      failedOnly.click();
    }
    submit(By.cssSelector("form.filter button[type=submit]"));
    assertThat(driver.getCurrentUrl()).contains("failed=1");
    shows(By.id("history"), ns + " / audit", "failed", "IllegalStateException", "audit ledger is unbalanced");
    assertThat(driver.findElement(By.cssSelector("form.filter input[name=failed]")).isSelected()).isTrue();
    screenshot("history");
  }

  @Test
  @Order(4)
  void theElectionsPageShowsTheLeaderAndWhoOwnsEachPartition() throws IOException {
    open("/elections");
    String billing = shows(By.xpath("//section[@id='elections']//tr[td[1]='" + ns + "'][td[2]='billing']"), "billing");
    assertThat(billing).containsAnyOf("alpha", "beta");
    shows(By.id("groups"), ns + " / partitions");
    String owned = wait.until(d -> String.join(", ", d.findElements(By.cssSelector("#groups td:nth-child(4)"))
        .stream().map(WebElement::getText).toList()));
    assertThat(owned).contains("p0", "p1", "p2", "p3");
    screenshot("elections");
  }

  @Test
  @Order(5)
  void theTasksPageLeadsToTheFailingTaskWithItsErrorAndChart() throws IOException {
    open("/tasks");
    shows(By.id("tasks"), ns + " / report", ns + " / flaky");
    shows(By.xpath("//table[@id='tasks']//tr[td/a='" + ns + " / flaky']"), "failing");
    screenshot("tasks");

    submit(By.linkText(ns + " / flaky"));
    assertThat(driver.findElement(By.tagName("h1")).getText()).isEqualTo("Task flaky");
    shows(By.id("task-state"), "active");
    shows(By.id("runs"), "failed", "IllegalStateException", "report server said 502");
    chartDrawn("#lateness svg");
    screenshot("task");
  }

  @Test
  @Order(6)
  void theQueuesPageShowsCountsAndAChartPerQueue() throws IOException {
    open("/queues");
    shows(By.xpath("//table[@id='queue-counts']//tr[td[1]='" + DashboardFleet.QUEUE + "']"), DashboardFleet.QUEUE);
    assertThat(driver.findElement(By.xpath("//h2[.='" + DashboardFleet.QUEUE + "']")).isDisplayed()).isTrue();
    chartDrawn("#chart-0 svg");
    screenshot("queues");
  }

  @Test
  @Order(7)
  void theJobsFilterFormFiltersByStateAndByPayload() throws IOException {
    open("/jobs");
    shows(By.id("jobs"), "succeeded", "discarded");
    screenshot("jobs");

    new Select(driver.findElement(By.cssSelector("#job-filter select[name=state]"))).selectByValue("discarded");
    submit(By.cssSelector("#job-filter button[type=submit]"));
    assertThat(driver.getCurrentUrl()).contains("state=discarded");
    shows(By.id("jobs"), "DiscardJobException", "customer 13 has no address");
    assertThat(texts(By.cssSelector("#jobs tbody .state"))).isNotEmpty().allMatch("discarded"::equals);

    new Select(driver.findElement(By.cssSelector("#job-filter select[name=state]"))).selectByValue("");
    WebElement payload = driver.findElement(By.cssSelector("#job-filter input[name=payload]"));
    payload.clear();
    payload.sendKeys("{\"customer\": 7}");
    submit(By.cssSelector("#job-filter button[type=submit]"));
    assertThat(driver.findElement(By.cssSelector("#job-filter input[name=payload]")).getDomProperty("value"))
        .isEqualTo("{\"customer\": 7}");
    assertThat(texts(By.cssSelector("#jobs tbody td:first-child"))).containsExactly(Long.toString(fleet.jobOf(7)));
  }

  @Test
  @Order(8)
  void aJobPageShowsItsPayloadAndItsFailedAttempts() throws IOException {
    long id = fleet.jobOf(7);
    open("/jobs/" + id);
    assertThat(driver.findElement(By.tagName("h1")).getText()).isEqualTo("Job " + id);
    shows(By.id("job"), DashboardFleet.QUEUE, "send");
    shows(By.id("payload"), "\"customer\": 7");
    shows(By.id("attempts"), "IllegalStateException", "mail server busy", "alpha");
    screenshot("job");
  }

  @Test
  @Order(10)
  void retryMakesADiscardedJobRunAgain() {
    long id = fleet.jobOf(13);
    open("/jobs/" + id);
    shows(By.id("job-state"), "discarded");
    long attempts = attempt(id);
    act(By.cssSelector("button.job-retry"), null);
    shows(By.id("flash"), "Retried 1 job.");
    assertThat(actionRecorded("job.retry", "job " + id, "done")).isTrue();
    // The worker discards customer 13 again: that leaves the fleet as the other tests expect it.
    Await.until("the retried job runs and is discarded again", WAIT,
        () -> attempt(id) > attempts && "discarded".equals(state(id)));
  }

  @Test
  @Order(11)
  void discardAsksFirstAndChangesNothingWhenTheOperatorSaysNo() {
    long id = parked(501);
    open("/jobs/" + id);
    WebElement button = driver.findElement(By.cssSelector("button.job-discard"));
    button.click();
    Alert confirm = wait.until(ExpectedConditions.alertIsPresent());
    assertThat(confirm.getText()).isEqualTo("Discard this job?");
    // Dismissing cancels the submit synchronously, inside the submit event: no request was sent.
    confirm.dismiss();
    assertThat(driver.getCurrentUrl()).doesNotContain("done=");
    assertThat(state(id)).isEqualTo("available");

    act(By.cssSelector("button.job-discard"), "Discard this job?");
    shows(By.id("flash"), "Discarded 1 job.");
    shows(By.id("job-state"), "discarded");
    assertThat(state(id)).isEqualTo("discarded");
  }

  @Test
  @Order(12)
  void cancelThenDeleteAJob() {
    long id = parked(502);
    open("/jobs/" + id);
    act(By.cssSelector("button.job-cancel"), "Cancel this job?");
    shows(By.id("flash"), "Cancelled 1 job.");
    shows(By.id("job-state"), "cancelled");
    assertThat(state(id)).isEqualTo("cancelled");

    act(By.cssSelector("button.job-delete"), "Delete this job? This cannot be undone.");
    shows(By.id("flash"), "Deleted 1 job.");
    assertThat(driver.findElement(By.tagName("h1")).getText()).isEqualTo("Jobs");
    assertThat(fleet.count("SELECT count(*) FROM " + fleet.schema + ".job WHERE id = " + id)).isZero();
  }

  @Test
  @Order(13)
  void aBulkActionChangesEveryJobTheFilterMatches() {
    String batch = UUID.randomUUID().toString().substring(0, 8);
    List<Long> ids = Stream.of(601, 602, 603).map(c -> parked(Map.of("customer", c, "batch", batch))).toList();
    open("/jobs");
    new Select(driver.findElement(By.cssSelector("#job-filter select[name=state]"))).selectByValue("available");
    driver.findElement(By.cssSelector("#job-filter input[name=payload]")).sendKeys("{\"batch\": \"" + batch + "\"}");
    submit(By.cssSelector("#job-filter button[type=submit]"));
    assertThat(texts(By.cssSelector("#jobs tbody td:first-child"))).hasSize(3);
    shows(By.cssSelector(".actions.bulk"), "For every available job this filter matches");

    act(By.cssSelector(".actions.bulk button.job-discard"), "Discard every job this filter matches?");
    shows(By.id("flash"), "Discarded 3 jobs.");
    shows(By.id("jobs"), "No job matches.");
    for (long id : ids) {
      assertThat(state(id)).isEqualTo("discarded");
    }
    assertThat(actionRecorded("job.discard", "jobs %" + batch + "%", "done")).isTrue();
  }

  @Test
  @Order(14)
  void pauseResumeAndTriggerATask() {
    open("/task?namespace=" + ns + "&name=report");
    act(By.cssSelector("button.task-pause"), "Pause this task on every node?");
    shows(By.id("flash"), "Paused the task.");
    shows(By.id("task-state"), "paused");
    assertThat(paused("report")).isEqualTo("true");

    act(By.cssSelector("button.task-resume"), null);
    shows(By.id("flash"), "Resumed the task.");
    shows(By.id("task-state"), "active");
    assertThat(paused("report")).isEqualTo("false");

    act(By.cssSelector("button.task-trigger"), null);
    shows(By.id("flash"), "Triggered the task.");
    Await.until("the triggered run happens", WAIT, () -> fleet.count("SELECT count(*) FROM " + fleet.schema
        + ".task_run WHERE task = 'report' AND kind = 'manual'") >= 1);
    shows(By.id("runs"), "manual");
  }

  @Test
  @Order(20)
  void aReadOnlyDashboardShowsNoActionAndRefusesAFormPostedAnyway() {
    long id = parked(701);
    open("/jobs/" + id);
    String token = driver.findElement(By.cssSelector("input[name=_pglock_csrf]")).getDomProperty("value");

    driver.get(readOnly.uri() + "jobs/" + id);
    shows(By.id("read-only"), "read-only");
    shows(By.id("job-state"), "available");
    assertThat(driver.findElements(By.cssSelector("form.action"))).isEmpty();
    driver.get(readOnly.uri() + "task?namespace=" + ns + "&name=report");
    shows(By.id("task-state"), "active");
    assertThat(driver.findElements(By.cssSelector("form.action"))).isEmpty();
    driver.get(readOnly.uri() + "jobs?state=available");
    shows(By.id("jobs"), "available");
    assertThat(driver.findElements(By.cssSelector(".actions.bulk, form.action"))).isEmpty();

    // What a hand-made form, or a stale page of a dashboard that was writable, would post.
    driver.executeScript("var f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];"
        + " f.id = 'forged';"
        + " [['action', 'job.discard'], ['_pglock_csrf', arguments[1]]].forEach(function (p) {"
        + "   var i = document.createElement('input'); i.type = 'hidden'; i.name = p[0]; i.value = p[1];"
        + "   f.appendChild(i); });"
        + " var b = document.createElement('button'); b.type = 'submit'; b.textContent = 'Discard';"
        + " f.appendChild(b); document.querySelector('main').appendChild(f);", "/jobs/" + id, token);
    submit(By.cssSelector("#forged button"));
    refused(403, "this dashboard is read-only");
    assertThat(state(id)).isEqualTo("available");
    assertThat(actionRecorded("job.discard", "job " + id, "refused")).isTrue();
  }

  @Test
  @Order(21)
  void aFormWithoutTheAntiForgeryTokenIsRefused() {
    long id = parked(702);
    open("/jobs/" + id);
    driver.executeScript("document.querySelectorAll('input[name=_pglock_csrf]')"
        + ".forEach(function (i) { i.remove(); });");
    assertThat(driver.findElements(By.cssSelector("input[name=_pglock_csrf]"))).isEmpty();
    act(By.cssSelector("button.job-discard"), "Discard this job?");
    refused(403, "anti-forgery token is missing");
    assertThat(state(id)).isEqualTo("available");
  }

  @Test
  @Order(22)
  void theLocksPageShowsANewLockWithoutAReload() throws Exception {
    String name = "live-" + UUID.randomUUID().toString().substring(0, 8);
    open("/locks");
    String mark = markPage(); // a reload would lose it
    try (LockHandle held = fleet.alpha.lock(name).acquire(Duration.ofSeconds(30))) {
      shows(By.id("locks"), ns + " / " + name);
    }
    wait.until(d -> !d.findElement(By.id("locks")).getText().contains(name));
    assertThat(driver.executeScript("return window.pglockPage;")).isEqualTo(mark);
    shows(By.id("live-status"), "live: updated");
  }

  @Test
  @Order(30)
  void theActionLogShowsWhatWasDone() throws IOException {
    long id = parked(801);
    open("/jobs/" + id);
    act(By.cssSelector("button.job-discard"), "Discard this job?");
    shows(By.id("flash"), "Discarded 1 job.");
    submit(By.linkText("Actions"));
    shows(By.xpath("//table[@id='action-log']//tr[td[4]='job " + id + "']"), "anonymous", "job.discard", "done");
    screenshot("actions");
  }

  private static boolean browserInstalled() {
    return Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
  }

  /** Starts Chromium for the tests: Debian's binaries, no network of its own, a throwaway profile. */
  private static ChromeDriver chromium(Path profile) {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    // The background-networking flags keep Chromium from calling home: this machine refuses it.
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--user-data-dir=" + profile, "--window-size=1400,1000",
        // The same pixels on every machine: screenshots for the docs come out 1400x1000.
        "--force-device-scale-factor=1", "--hide-scrollbars");
    // The driver's path is given: Selenium Manager, which would download one, never runs.
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(CHROMEDRIVER.toFile())
        .usingAnyFreePort()
        .withLogFile(new File("target/chromedriver.log"))
        .build();
    ChromeDriver chrome = new ChromeDriver(service, options);
    chrome.manage().timeouts().pageLoadTimeout(WAIT).scriptTimeout(WAIT);
    chrome.manage().window().setSize(new Dimension(1400, 1000));
    return chrome;
  }

  /**
   * {@return the row of a lock held or awaited by a node: advisory locks are the database's, so
   * another test's sessions on the same database can show too}
   */
  private static By lockRow(String state, String label, String node) {
    return By.xpath("//div[@id='locks']//tr[@class='" + state + "'][td[1]='" + label + "'][td[4]='" + node + "']");
  }

  private static void open(String path) {
    driver.get(server.uri() + path.substring(1));
  }

  /**
   * Waits until an element shows every text (it may be replaced by a live update meanwhile), and
   * returns its text.
   */
  private static String shows(By where, String... texts) {
    AtomicReference<String> seen = new AtomicReference<>("(not found)");
    try {
      return wait.until(d -> {
        WebElement e = d.findElement(where);
        String text = e.getText();
        seen.set(text);
        return e.isDisplayed() && Arrays.stream(texts).allMatch(text::contains) ? text : null;
      });
    } catch (TimeoutException e) {
      throw new AssertionError(where + " should show " + Arrays.toString(texts) + " but shows: " + seen.get(), e);
    }
  }

  /** {@return the texts of the elements found, read in one go so that a live update cannot split them} */
  private static List<String> texts(By what) {
    return wait.until(d -> d.findElements(what).stream().map(WebElement::getText).toList());
  }

  /** Clicks a link or button that loads another page, and waits for that page. */
  private static void submit(By what) {
    String mark = markPage();
    driver.findElement(what).click();
    waitForNextPage(mark);
  }

  /**
   * Clicks an action's button, accepts its confirm dialog if it asks one (and checks its question),
   * and waits for the page the action leads to.
   */
  private static void act(By button, String question) {
    String mark = markPage();
    driver.findElement(button).click();
    if (question != null) {
      Alert confirm = wait.until(ExpectedConditions.alertIsPresent());
      assertThat(confirm.getText()).isEqualTo(question);
      confirm.accept();
    }
    waitForNextPage(mark);
  }

  /** {@return a mark set on the page's window: a page loaded since has a new window, without it} */
  private static String markPage() {
    String mark = UUID.randomUUID().toString();
    driver.executeScript("window.pglockPage = arguments[0];", mark);
    return mark;
  }

  /**
   * Waits until the window no longer has the mark and its page is loaded. Not by an old element
   * going stale: in the middle of a navigation, chromedriver can answer for an old element with an
   * error that is neither stale nor found.
   */
  private static void waitForNextPage(String mark) {
    wait.until(d -> {
      try {
        return Boolean.TRUE.equals(driver.executeScript(
            "return window.pglockPage !== arguments[0] && document.readyState === 'complete';", mark));
      } catch (WebDriverException e) {
        return false; // between the two documents
      }
    });
  }

  /** Checks the page is the error page of a refusal with its status and message. */
  private static void refused(int status, String message) {
    shows(By.id("error-message"), message);
    assertThat(driver.findElement(By.tagName("h1")).getText()).isEqualTo("Action refused");
    assertThat(driver.findElement(By.id("error-message")).getDomAttribute("data-status"))
        .isEqualTo(Integer.toString(status));
    assertThat(driver.findElements(By.id("flash"))).isEmpty();
  }

  private static void screenshot(String page) throws IOException {
    byte[] png = driver.getScreenshotAs(OutputType.BYTES);
    save(Path.of("target", "screenshots"), page, png);
    String docs = System.getProperty(SCREENSHOTS, "");
    if (!docs.isBlank()) {
      save(Path.of(docs), page, png);
    }
  }

  private static void save(Path dir, String page, byte[] png) throws IOException {
    Files.createDirectories(dir);
    Files.write(dir.resolve("dashboard-" + page + ".png"), png);
  }

  /** Enqueues a job for a customer that waits an hour: it stays available for the test to act on. */
  private static long parked(int customer) {
    return parked(Map.of("customer", customer));
  }

  private static long parked(Map<String, Object> payload) {
    return fleet.jobs.enqueue(JobRequest.of("send", payload).queue(DashboardFleet.QUEUE).delay(Duration.ofHours(1)))
        .id();
  }

  private static String state(long id) {
    return fleet.text("SELECT state FROM " + fleet.schema + ".job WHERE id = ?", id);
  }

  private static long attempt(long id) {
    return fleet.count("SELECT attempt FROM " + fleet.schema + ".job WHERE id = " + id);
  }

  private static String paused(String task) {
    return fleet.text("SELECT paused::text FROM " + fleet.schema + ".scheduled_task WHERE name = ?", task);
  }

  /** {@return whether the action log has an entry: the target is a LIKE pattern} */
  private static boolean actionRecorded(String action, String target, String outcome) {
    return Long.parseLong(fleet.text("SELECT count(*) FROM " + fleet.schema + ".dashboard_action WHERE action = '"
        + action + "' AND outcome = '" + outcome + "' AND target LIKE ?", target)) > 0;
  }

  /** Deletes Chromium's profile; what cannot be deleted stays in the temp directory, harmless. */
  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      System.err.println("could not delete all of " + root + ": " + e);
    }
  }

  /** A chart is on the page, visible, with at least one bar. */
  private static void chartDrawn(String css) {
    WebElement chart = driver.findElement(By.cssSelector(css));
    assertThat(chart.isDisplayed()).isTrue();
    assertThat(chart.findElements(By.tagName("rect"))).isNotEmpty();
  }
}
