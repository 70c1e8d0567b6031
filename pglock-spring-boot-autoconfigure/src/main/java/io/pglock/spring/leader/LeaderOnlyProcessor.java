package io.pglock.spring.leader;

import io.pglock.PgLocks;
import io.pglock.election.Candidate;
import io.pglock.election.LeaderElection;
import io.pglock.election.Revocation;
import io.pglock.election.Term;
import io.pglock.spring.boot.PgLockPhases;
import io.pglock.spring.health.HealthDetails;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Stands this node in the election of every {@link LeaderOnly} bean when the context starts, starts
 * the election's beans while this node leads it, stops them when the term ends, and publishes
 * {@link LeadershipChangedEvent}s. Leaves every election first when the context stops (phase
 * {@link PgLockPhases#ELECTIONS}), so that a standby takes over at once.
 */
public final class LeaderOnlyProcessor implements BeanPostProcessor, SmartLifecycle, ApplicationEventPublisherAware,
    HealthDetails {
  private static final Logger log = LoggerFactory.getLogger(LeaderOnlyProcessor.class);
  private final ObjectProvider<PgLocks> locks;
  private final Map<String, List<Lifecycle>> beans = new LinkedHashMap<>();
  private final Map<String, LeaderElection> elections = new LinkedHashMap<>();
  private ApplicationEventPublisher events;
  private volatile boolean running;

  /**
   * Creates the processor.
   *
   * @param locks the node's instance, used when the context starts
   */
  public LeaderOnlyProcessor(ObjectProvider<PgLocks> locks) {
    this.locks = locks;
  }

  @Override
  public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
    this.events = publisher;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    LeaderOnly a = AnnotatedElementUtils.findMergedAnnotation(AopProxyUtils.ultimateTargetClass(bean), LeaderOnly.class);
    if (a == null) {
      return bean;
    }
    if (!(bean instanceof Lifecycle lifecycle)) {
      throw new IllegalStateException("@LeaderOnly bean " + beanName + " (" + bean.getClass().getName()
          + ") must implement org.springframework.context.Lifecycle: its start() and stop() run as this node gains"
          + " and loses the leadership of \"" + a.value() + "\"");
    }
    if (bean instanceof SmartLifecycle smart && smart.isAutoStartup()) {
      throw new IllegalStateException("@LeaderOnly bean " + beanName + " is a SmartLifecycle that starts on its own"
          + " (isAutoStartup() is true), so it would run on every node: return false from isAutoStartup()");
    }
    LeaderElection.lockName(a.value()); // checks the election's name now, naming it
    synchronized (beans) {
      beans.computeIfAbsent(a.value(), n -> new ArrayList<>()).add(lifecycle);
    }
    return bean;
  }

  @Override
  public void start() {
    synchronized (beans) {
      PgLocks pg = beans.isEmpty() ? null : locks.getObject();
      for (Map.Entry<String, List<Lifecycle>> e : beans.entrySet()) {
        elections.put(e.getKey(), LeaderElection.join(pg, e.getKey(), new BeanCandidate(List.copyOf(e.getValue()))));
      }
    }
    running = true;
  }

  @Override
  public void stop() {
    running = false;
    List<LeaderElection> toClose;
    synchronized (beans) {
      toClose = new ArrayList<>(elections.values());
      elections.clear();
    }
    for (LeaderElection election : toClose) {
      election.close(); // revokes the term (stopping the beans) before releasing the lock
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PgLockPhases.ELECTIONS;
  }

  /**
   * Whether this node leads an election now.
   *
   * @param election the election's name
   * @return true while this node leads it
   */
  public boolean isLeader(String election) {
    LeaderElection e;
    synchronized (beans) {
      e = elections.get(election);
    }
    return e != null && e.isLeader();
  }

  /**
   * This node's current term in an election.
   *
   * @param election the election's name
   * @return the term, while this node leads it
   */
  public Optional<Term> currentTerm(String election) {
    LeaderElection e;
    synchronized (beans) {
      e = elections.get(election);
    }
    return e == null ? Optional.empty() : e.currentTerm();
  }

  /** {@return the names of the elections this node stands in} */
  public List<String> elections() {
    synchronized (beans) {
      return List.copyOf(elections.keySet());
    }
  }

  @Override
  public void addHealthDetails(Map<String, Object> details) {
    Map<String, Object> led = new LinkedHashMap<>();
    synchronized (beans) {
      elections.forEach((name, e) -> led.put(name, e.isLeader() ? "leader" : "standby"));
    }
    if (!led.isEmpty()) {
      details.put("elections", led);
    }
  }

  private final class BeanCandidate implements Candidate {
    private final List<Lifecycle> lifecycles;

    BeanCandidate(List<Lifecycle> lifecycles) {
      this.lifecycles = lifecycles;
    }

    @Override
    public void elected(Term term) {
      log.info("pglock: elected leader of \"{}\" (token {}): starting {} bean(s)", term.election(),
          term.fencingToken(), lifecycles.size());
      for (Lifecycle l : lifecycles) {
        l.start();
      }
      publish(new LeadershipChangedEvent(LeaderOnlyProcessor.this, term, null));
    }

    @Override
    public void revoked(Term term, Revocation reason) {
      log.info("pglock: leadership of \"{}\" ended ({}): stopping {} bean(s)", term.election(), reason, lifecycles.size());
      for (int i = lifecycles.size() - 1; i >= 0; i--) {
        try {
          lifecycles.get(i).stop();
        } catch (RuntimeException e) {
          log.warn("pglock: stopping a @LeaderOnly bean of \"{}\" failed", term.election(), e);
        }
      }
      publish(new LeadershipChangedEvent(LeaderOnlyProcessor.this, term, reason));
    }

    private void publish(LeadershipChangedEvent event) {
      if (events != null) {
        try {
          events.publishEvent(event);
        } catch (RuntimeException e) {
          log.warn("pglock: a listener of {} failed", event, e);
        }
      }
    }
  }
}
