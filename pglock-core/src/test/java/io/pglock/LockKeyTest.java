package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Pure value-type tests: no database involved. */
class LockKeyTest {

  @Test
  void named_derivesSha256PrefixAsSignedLong() {
    // Reference values computed independently: first 8 bytes of SHA-256, big-endian, signed.
    assertThat(LockKey.named("billing", "invoice-42").int64()).isEqualTo(-9139303558876667299L);
    assertThat(LockKey.named("test", "ключ-🔒").int64()).isEqualTo(3181286184103758919L);
  }

  @Test
  void toString_parsesBack_inEveryKeySpace() {
    for (LockKey k : new LockKey[] {LockKey.of(-42L), LockKey.of(Long.MIN_VALUE), LockKey.of(-7, 9),
        LockKey.named("billing", "invoice:42 with spaces")}) {
      assertThat(LockKey.parse(k.toString())).isEqualTo(k);
    }
    assertThat(LockKey.of(-7, 9).toString()).isEqualTo("int32x2:-7:9");
  }

  @Test
  void keySpaces_areKeptApart() {
    LockKey pair = LockKey.of(0, 42);
    LockKey int64 = LockKey.of(42L);
    assertThat(pair.objsubid()).isEqualTo(2);
    assertThat(int64.objsubid()).isEqualTo(1);
    assertThat(pair.sameServerLock(int64)).isFalse();
    LockKey name = LockKey.named("a", "b");
    assertThat(name.sameServerLock(LockKey.of(name.int64()))).isTrue();
    assertThat(name).isNotEqualTo(LockKey.of(name.int64()));
    assertThatThrownBy(pair::int64).isInstanceOf(IllegalStateException.class).hasMessageContaining("first()");
  }

  @Test
  void named_badInput_isRefusedWithTheReason() {
    assertThatThrownBy(() -> LockKey.named("a:b", "x")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("':'");
    assertThatThrownBy(() -> LockKey.named("", "x")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("namespace must not be null or empty");
    assertThatThrownBy(() -> LockKey.named("a", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be null");
    assertThatThrownBy(() -> LockKey.named("a", "  ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blank");
    assertThatThrownBy(() -> LockKey.named("a", "x".repeat(513))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("513 UTF-8 bytes, longer than 512");
    assertThatThrownBy(() -> LockKey.parse("int64:abc")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a lock key");
    assertThatThrownBy(() -> LockKey.parse("nonsense")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected int64:<long>");
  }
}
