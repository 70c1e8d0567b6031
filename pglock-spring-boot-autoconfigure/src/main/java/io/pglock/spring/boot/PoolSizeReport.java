package io.pglock.spring.boot;

import io.pglock.PgLocks;
import io.pglock.PgLocksConfig;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/** Runs {@link PoolSizeCheck} once every pglock bean exists, over what each keeps borrowed. */
final class PoolSizeReport implements SmartInitializingSingleton {
  private final PgLocks locks;
  private final ObjectProvider<ConnectionBudget> budgets;
  private volatile String warning;

  PoolSizeReport(PgLocks locks, ObjectProvider<ConnectionBudget> budgets) {
    this.locks = locks;
    this.budgets = budgets;
  }

  @Override
  public void afterSingletonsInstantiated() {
    PgLocksConfig config = locks.config();
    List<String> parts = new ArrayList<>();
    int held = 0;
    if (!config.transactionLocksOnly()) {
      held += config.lockSessions() + config.waitSessions();
      parts.add(config.lockSessions() + " lock session(s)");
      parts.add("up to " + config.waitSessions() + " wait session(s)");
    }
    for (ConnectionBudget b : budgets.orderedStream().toList()) {
      if (b.connectionsHeld() > 0) {
        held += b.connectionsHeld();
        parts.add(b.describeConnections());
      }
    }
    warning = PoolSizeCheck.check(config.dataSource(), held, String.join(", ", parts));
  }

  /** {@return the warning logged at start, or null} */
  String warning() {
    return warning;
  }
}
