package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The name patterns of {@code --name} and the ages of {@code pglock locks}, which need no database. */
class NameGlobTest {

  @Test
  void matches_starAndQuestionMark_theRestLiterally() {
    assertThat(new NameGlob("invoice-*").matches("invoice-42")).isTrue();
    assertThat(new NameGlob("invoice-?").matches("invoice-42")).isFalse();
    assertThat(new NameGlob("a.c").matches("abc")).as("a dot is a dot").isFalse();
    assertThat(new NameGlob("a[b]").matches("a[b]")).isTrue();
    assertThat(new NameGlob("*").matches(null)).as("a raw key has no name").isFalse();
  }

  @Test
  void like_escapesPercentUnderscoreAndBackslash_andTranslatesTheWildcards() {
    assertThat(new NameGlob("50%_off\\*?").like()).isEqualTo("50\\%\\_off\\\\%_");
  }

  @Test
  void ages_showTheTwoLargestUnits() {
    assertThat(Ages.format(Duration.ofSeconds(45))).isEqualTo("45s");
    assertThat(Ages.format(Duration.ofSeconds(192))).isEqualTo("3m12s");
    assertThat(Ages.format(Duration.ofMinutes(125))).isEqualTo("2h05m");
    assertThat(Ages.format(Duration.ofHours(76))).isEqualTo("3d04h");
    assertThat(Ages.format(Duration.ofSeconds(-3))).as("clocks a little apart").isEqualTo("0s");
  }
}
