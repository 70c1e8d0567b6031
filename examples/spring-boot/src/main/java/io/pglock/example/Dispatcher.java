package io.pglock.example;

import io.pglock.spring.leader.LeaderOnly;
import io.pglock.spring.leader.LeadershipChangedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** Runs on the leader of the "dispatcher" election only; another node takes over when it goes. */
@Component
@LeaderOnly("dispatcher")
public class Dispatcher implements Lifecycle {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
  private volatile boolean running;

  @Override
  public void start() {
    running = true;
    log.info("this node is the dispatcher now");
  }

  @Override
  public void stop() {
    running = false;
    log.info("this node is no longer the dispatcher");
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @EventListener
  void onLeadership(LeadershipChangedEvent event) {
    log.info("{}", event);
  }
}
