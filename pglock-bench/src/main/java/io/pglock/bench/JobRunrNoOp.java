package io.pglock.bench;

import org.jobrunr.jobs.lambdas.JobRequest;
import org.jobrunr.jobs.lambdas.JobRequestHandler;

/**
 * JobRunr's no-op job for B10, as a {@code JobRequest} and its {@code JobRequestHandler} (JobRunr's
 * API for jobs enqueued as data; its lambda API would analyse each lambda's bytecode with ASM at
 * enqueue, which does not change what a worker does). Public, with a public {@code run}: JobRunr calls
 * it by reflection ({@code Method.invoke}, without {@code setAccessible}).
 */
public final class JobRunrNoOp {
  private JobRunrNoOp() {}

  /** One job. JobRunr stores it as JSON in the job's row; the number keeps the jobs apart. */
  public static final class Request implements JobRequest {
    private int n;

    /** For JobRunr's JSON mapper, which rebuilds the request in the worker. */
    public Request() {}

    Request(int n) {
      this.n = n;
    }

    @Override
    public Class<Handler> getJobRequestHandler() {
      return Handler.class;
    }
  }

  /** The handler, given to JobRunr by B10's {@code JobActivator}: it only counts. */
  public static final class Handler implements JobRequestHandler<Request> {
    private final BurnDownProgress progress;

    Handler(BurnDownProgress progress) {
      this.progress = progress;
    }

    @Override
    public void run(Request request) {
      progress.handled();
    }
  }
}
