package io.pglock.dashboard.internal.view;

/**
 * A count as the dashboard can afford it: exact below a cap, then the planner's estimate.
 *
 * @param value the count or the estimate
 * @param estimated true if {@code value} is the planner's estimate (the exact count reached the cap)
 */
public record Count(long value, boolean estimated) {

  /** {@return the count as shown: {@code 1,234} or {@code ~1.2M}} */
  public String text() {
    return estimated ? "~" + Format.compact(value) : String.format("%,d", value);
  }

  /** {@return true if the count is zero} */
  public boolean zero() {
    return value == 0 && !estimated;
  }
}
