package io.pglock.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

/** The schedules alone: cron through cron-utils (seconds, zones, daylight saving), fixed rate, fixed delay. */
class CronScheduleTest {
  private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

  @Test
  void dailyAt0230_acrossBothEuropeanChangesOf2027() {
    Schedule daily = Schedule.cron("0 30 2 * * *", BERLIN);
    // Spring forward, Sunday 28 March 2027: 02:00 CET becomes 03:00 CEST, so 02:30 does not exist.
    Instant saturday = daily.next(ZonedDateTime.of(2027, 3, 27, 0, 0, 0, 0, BERLIN).toInstant()).orElseThrow();
    assertThat(saturday).isEqualTo(ZonedDateTime.of(2027, 3, 27, 2, 30, 0, 0, BERLIN).toInstant());
    Instant sunday = daily.next(saturday).orElseThrow();
    Instant monday = daily.next(sunday).orElseThrow();
    // The gap day runs once, at the end of the gap: 03:00 CEST (01:00 UTC), the first instant after
    // the missing 02:30 (cron-utils alone would skip the day).
    assertThat(sunday).isEqualTo(Instant.parse("2027-03-28T01:00:00Z"));
    assertThat(sunday.atZone(BERLIN).toLocalTime()).hasToString("03:00");
    assertThat(monday).isEqualTo(ZonedDateTime.of(2027, 3, 29, 2, 30, 0, 0, BERLIN).toInstant());

    // Fall back, Sunday 31 October 2027: 03:00 CEST becomes 02:00 CET, so 02:30 happens twice.
    Instant before = daily.next(ZonedDateTime.of(2027, 10, 30, 0, 0, 0, 0, BERLIN).toInstant()).orElseThrow();
    Instant overlapDay = daily.next(before).orElseThrow();
    Instant after = daily.next(overlapDay).orElseThrow();
    assertThat(overlapDay).as("the first 02:30, CEST").isEqualTo(Instant.parse("2027-10-31T00:30:00Z"));
    assertThat(after).as("once on the overlap day: next is Monday").isEqualTo(Instant.parse("2027-11-01T01:30:00Z"));
  }

  @Test
  void hourlyAndEveryMinute_throughTheGapAndTheOverlap_neitherTwiceNorMissingAnInstant() {
    // Every 30 minutes in Berlin around the spring gap: 01:30 CET, then 03:00 CEST (the gap's end,
    // for the missing 02:00 and 02:30), then 03:30 CEST.
    Schedule halfHourly = Schedule.cron("0 0/30 * * * *", BERLIN);
    Instant t = Instant.parse("2027-03-28T00:30:00Z"); // 01:30 CET
    Instant a = halfHourly.next(t).orElseThrow();
    Instant b = halfHourly.next(a).orElseThrow();
    assertThat(a).isEqualTo(Instant.parse("2027-03-28T01:00:00Z"));
    assertThat(b).isEqualTo(Instant.parse("2027-03-28T01:30:00Z"));
    // Around the overlap, instants keep going forward 30 minutes apart (02:00 CEST, 02:30 CEST,
    // 02:00 CET, 02:30 CET): instant-based, every half hour of real time once.
    Instant x = Instant.parse("2027-10-30T23:30:00Z");
    for (int i = 0; i < 6; i++) {
      Instant y = halfHourly.next(x).orElseThrow();
      assertThat(Duration.between(x, y)).isEqualTo(Duration.ofMinutes(30));
      x = y;
    }
  }

  @Test
  void yearlyTaskOnAGapDay_runsAtTheGapsEnd_evenWhenOtherChangesComeFirst() {
    // 28 March at 02:30: 2026's 28th is a Saturday (no change), 2027's is the change day.
    Schedule yearly = Schedule.cron("0 30 2 28 3 *", BERLIN);
    Instant y2026 = yearly.next(Instant.parse("2026-03-01T00:00:00Z")).orElseThrow();
    assertThat(y2026).isEqualTo(ZonedDateTime.of(2026, 3, 28, 2, 30, 0, 0, BERLIN).toInstant());
    // Between the 2026 slot and 2027's lie the change of 29 March 2026 and of 25 October 2026.
    assertThat(yearly.next(y2026)).contains(Instant.parse("2027-03-28T01:00:00Z"));
  }

  @Test
  void secondsField_andUtcDefault() {
    Schedule every15 = Schedule.cron("*/15 * * * * *");
    assertThat(every15.next(Instant.parse("2027-01-01T00:00:07Z"))).contains(Instant.parse("2027-01-01T00:00:15Z"));
    assertThat(every15.describe()).isEqualTo("cron \"*/15 * * * * *\" Z");
  }

  /**
   * Cron slots are whole seconds whatever the fraction of the instant they follow: cron-utils alone
   * answers 00:00:08.123456 after 00:00:07.123456 for "* * * * * *" (it keeps the fraction), which
   * made a per-second task's slots depend on when in its second the task was first registered.
   */
  @Test
  void everySecond_afterAFraction_wholeSeconds() {
    Schedule everySecond = Schedule.cron("* * * * * *");
    assertThat(everySecond.next(Instant.parse("2027-01-01T00:00:07.123456Z"))).contains(Instant.parse("2027-01-01T00:00:08Z"));
    assertThat(everySecond.next(Instant.parse("2027-01-01T00:00:07Z"))).contains(Instant.parse("2027-01-01T00:00:08Z"));
    assertThat(everySecond.next(Instant.parse("2027-01-01T00:00:07.999999999Z"))).contains(Instant.parse("2027-01-01T00:00:08Z"));
    Schedule range = Schedule.cron("0-30 * * * * *");
    assertThat(range.next(Instant.parse("2027-01-01T00:00:07.5Z"))).contains(Instant.parse("2027-01-01T00:00:08Z"));
    assertThat(range.next(Instant.parse("2027-01-01T00:00:30.5Z"))).contains(Instant.parse("2027-01-01T00:01:00Z"));
  }

  @Test
  void fixedRate_alignedOnTheEpoch_fixedDelay_afterTheEnd() {
    Schedule minute = Schedule.fixedRate(Duration.ofMinutes(1));
    assertThat(minute.next(Instant.parse("2027-01-01T00:00:59.999Z"))).contains(Instant.parse("2027-01-01T00:01:00Z"));
    assertThat(minute.next(Instant.parse("2027-01-01T00:01:00Z"))).contains(Instant.parse("2027-01-01T00:02:00Z"));
    assertThat(minute.fromPreviousEnd()).isFalse();
    Schedule delay = Schedule.fixedDelay(Duration.ofSeconds(5));
    assertThat(delay.next(Instant.parse("2027-01-01T00:00:00.123456789Z"))).contains(Instant.parse("2027-01-01T00:00:05.123456Z"));
    assertThat(delay.fromPreviousEnd()).isTrue();
  }

  @Test
  void badSchedules_clearErrors() {
    assertThatThrownBy(() -> Schedule.cron("0 30 2 * *")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a valid cron expression \"0 30 2 * *\"").hasMessageContaining("six fields");
    assertThatThrownBy(() -> Schedule.cron("0 61 * * * *")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a valid cron expression");
    assertThatThrownBy(() -> Schedule.fixedRate(Duration.ofMillis(10))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fixedRate period must be from PT1S");
    assertThatThrownBy(() -> Task.builder("bad name", Schedule.fixedRate(Duration.ofSeconds(1))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("task name must be");
    assertThatThrownBy(() -> Task.builder("t", Schedule.fixedRate(Duration.ofSeconds(1))).overlap(Overlap.SKIP)
        .overlap(Overlap.QUEUE)).isInstanceOf(IllegalStateException.class).hasMessageContaining("overlap was already set");
  }
}
