package io.pglock.schedule.internal;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import io.pglock.schedule.Schedule;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.util.Objects;
import java.util.Optional;

/** A cron expression in Spring's six-field format, parsed and evaluated by cron-utils, in a zone. */
public final class CronSchedule implements Schedule {
  private static final CronParser PARSER = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

  private final String expression;
  private final ZoneId zone;
  private final ExecutionTime times;

  public CronSchedule(String expression, ZoneId zone) {
    this.expression = Objects.requireNonNull(expression, "expression").trim();
    this.zone = Objects.requireNonNull(zone, "zone");
    Cron cron;
    try {
      cron = PARSER.parse(this.expression).validate();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a valid cron expression \"" + expression + "\": " + e.getMessage()
          + " (six fields: second minute hour day-of-month month day-of-week, such as \"0 30 2 * * *\")", e);
    }
    this.times = ExecutionTime.forCron(cron);
  }

  /**
   * The next slot by cron-utils in the zone, except across a spring-forward gap: cron-utils skips a
   * time that does not exist that day (02:30 on the day clocks jump from 02:00 to 03:00), so a
   * daily task would not run that day. If the expression matches a wall time inside the gap, the
   * slot is the gap's end, the first instant after the missing times (03:00), as Vixie cron does.
   *
   * <p>Cron times are whole seconds: cron-utils is asked from the start of {@code after}'s second,
   * since for an expression that matches the next second ({@code "* * * * * *"}) it keeps the
   * fraction it is given, and slots would then follow the instant a node registered the task.
   */
  @Override
  public Optional<Instant> next(Instant after) {
    Instant second = after.truncatedTo(ChronoUnit.SECONDS); // no whole second lies in (second, after]
    Optional<Instant> next = times.nextExecution(ZonedDateTime.ofInstant(second, zone)).map(ZonedDateTime::toInstant);
    // Every gap before the next slot (a yearly task may pass several): the first one it matches in wins.
    ZoneOffsetTransition t = zone.getRules().nextTransition(after);
    for (int i = 0; t != null && i < 10_000 && (next.isEmpty() || t.getInstant().isBefore(next.get())); i++) {
      if (t.isGap() && matchesInGap(t)) {
        return Optional.of(t.getInstant());
      }
      t = zone.getRules().nextTransition(t.getInstant());
    }
    return next;
  }

  /** Whether the expression matches a wall time in the gap [before, after) of the transition. */
  private boolean matchesInGap(ZoneOffsetTransition t) {
    ZonedDateTime gapStart = t.getDateTimeBefore().atZone(ZoneOffset.UTC); // wall times, read as UTC
    ZonedDateTime gapEnd = t.getDateTimeAfter().atZone(ZoneOffset.UTC);
    return times.nextExecution(gapStart.minusNanos(1)).filter(w -> w.isBefore(gapEnd)).isPresent();
  }

  @Override
  public boolean fromPreviousEnd() {
    return false;
  }

  @Override
  public String describe() {
    return "cron \"" + expression + "\" " + zone.getId();
  }

  @Override
  public String toString() {
    return describe();
  }
}
