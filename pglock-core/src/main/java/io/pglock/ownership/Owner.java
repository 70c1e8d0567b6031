package io.pglock.ownership;

/**
 * Told when this member gains and loses a resource. Both run on the ownership's own thread, one at
 * a time and in order: {@code lost} of a resource always follows its {@code gained}, and a resource
 * is gained again only after its {@code lost} has returned. Keep them short (start or stop work on
 * another thread): while one runs, the ownership neither balances nor notices losses.
 *
 * <p>A resource is released only after {@code lost} returns, when this member gives it up (a
 * rebalance, a removal, a shutdown); so another member gains it only after this one was told. When
 * the resource is taken away (the connection died, the lease ran out) the server may already have
 * handed it on: {@code lost} then comes as soon as this member notices, and, for a lease that ran
 * out, before the server frees the lock (see {@link io.pglock.PgLocksBuilder#lease}).
 */
public interface Owner {

  /**
   * This member now owns the resource, until {@link #lost} is called for it.
   *
   * @param resource the resource, with the ownership's fencing token
   */
  void gained(OwnedResource resource);

  /**
   * This member no longer owns the resource: stop working on it.
   *
   * @param resource the resource as {@link #gained} was told
   * @param why why the ownership ended
   */
  void lost(OwnedResource resource, Release why);
}
