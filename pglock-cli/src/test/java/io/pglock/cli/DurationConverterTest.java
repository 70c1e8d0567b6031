package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {
  private final DurationConverter converter = new DurationConverter();

  @ParameterizedTest
  @CsvSource({"500ms, 500", "30s, 30000", "2m, 120000", "1h, 3600000", "1.5s, 1500", "30, 30000", "0.25, 250",
      "0, 0", "PT2S, 2000", "10 s, 10000", "2M, 120000", "1d, 86400000", "1.5d, 129600000"})
  void convert_numberAndUnit(String text, long millis) {
    assertThat(converter.convert(text)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "s", "-1s", "1.s", "thirty", "PT-1S", "P1Y", "367d", "9000h"})
  void convert_notADuration_isRefusedQuotingIt(String text) {
    assertThatThrownBy(() -> converter.convert(text)).isInstanceOf(TypeConversionException.class)
        .hasMessageContaining("'" + text + "'");
  }

  @Test
  void format_showsTheLargestWholeUnit() {
    assertThat(DurationConverter.format(Duration.ofMillis(300))).isEqualTo("300ms");
    assertThat(DurationConverter.format(Duration.ofSeconds(10))).isEqualTo("10s");
    assertThat(DurationConverter.format(Duration.ofMinutes(2))).isEqualTo("2m");
    assertThat(DurationConverter.format(Duration.ofHours(1))).isEqualTo("1h");
    assertThat(DurationConverter.format(Duration.ZERO)).isEqualTo("0ms");
  }
}
