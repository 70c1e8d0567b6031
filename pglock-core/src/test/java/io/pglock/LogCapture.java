package io.pglock;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A logback appender (configured in logback-test.xml) and a JUnit extension: a test fails if pglock
 * logged at ERROR while it ran. pglock logs ERROR only for what must never happen (an unlock the
 * server did not expect, a failing loss callback, an unexpected exception in a session loop).
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements BeforeEachCallback, AfterEachCallback {
  private static final ConcurrentLinkedQueue<ILoggingEvent> ERRORS = new ConcurrentLinkedQueue<>();

  @Override
  protected void append(ILoggingEvent event) {
    if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
      ERRORS.add(event);
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    ERRORS.clear();
  }

  /** Takes the errors logged so far: a test that provokes an error on purpose checks it this way. */
  static List<String> drainErrors() {
    List<String> seen = new ArrayList<>();
    ILoggingEvent e;
    while ((e = ERRORS.poll()) != null) {
      seen.add("[" + e.getThreadName() + "] " + e.getLoggerName() + ": " + e.getFormattedMessage());
    }
    return seen;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    List<String> seen = drainErrors();
    if (!seen.isEmpty()) {
      throw new AssertionError("pglock logged unexpected errors during " + context.getDisplayName() + ": " + seen);
    }
  }
}
