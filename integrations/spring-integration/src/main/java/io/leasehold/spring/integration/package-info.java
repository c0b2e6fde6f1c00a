/**
 * A Spring Integration lock registry on Leasehold leases: {@link
 * io.leasehold.spring.integration.LeaseholdLockRegistry} hands out {@link
 * io.leasehold.spring.integration.LeaseholdLock}s, each a fenced lease on {@code spring-lock/<key>}
 * (the prefix is configurable).
 *
 * <p>The locks behave as Spring's registries document theirs: reentrant for the owning thread (the
 * last {@code unlock()} releases the lease), {@code tryLock(time, unit)} waiting for the name,
 * {@code unlock()} by another thread refused with {@link java.lang.IllegalStateException}, and a
 * lease lost while held (expired, revoked) reported by the last {@code unlock()} as a {@link
 * java.util.ConcurrentModificationException}. The client keeps held leases alive, so a lock does
 * not expire while its process runs; the TTL (the client's session, or {@code Builder.ttl}, or
 * {@code lock(Duration)}) is how long the name stays taken after the process stops. The fencing
 * token is {@code LeaseholdLock.token()}.
 *
 * <pre>{@code
 * @Configuration
 * class LockConfig {
 *   @Bean(destroyMethod = "close")
 *   LeaseholdClient leaseholdClient() {
 *     return LeaseholdClient.builder()
 *         .endpoints("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")
 *         .build();
 *   }
 *
 *   @Bean
 *   LeaseholdLockRegistry lockRegistry(LeaseholdClient client) {
 *     return LeaseholdLockRegistry.builder(client).prefix("orders/").build();
 *   }
 *
 *   // Leader election over the same locks: one instance at a time runs the "orders" role.
 *   @Bean
 *   LockRegistryLeaderInitiator leaderInitiator(LeaseholdLockRegistry registry) {
 *     return new LockRegistryLeaderInitiator(registry, new DefaultCandidate("orders-node-1", "orders"));
 *   }
 * }
 *
 * @Service
 * class Invoicing {
 *   private final LeaseholdLockRegistry locks;
 *   private final InvoiceStore store;
 *
 *   Invoicing(LeaseholdLockRegistry locks, InvoiceStore store) {
 *     this.locks = locks;
 *     this.store = store;
 *   }
 *
 *   void settle(String invoiceId) throws InterruptedException, TimeoutException {
 *     LeaseholdLock lock = locks.obtain("invoice-" + invoiceId);
 *     if (!lock.tryLock(5, TimeUnit.SECONDS)) {
 *       throw new TimeoutException("invoice " + invoiceId + " is being settled elsewhere");
 *     }
 *     try {
 *       store.settle(invoiceId, lock.token());  // the store refuses tokens older than one it has seen
 *     } finally {
 *       lock.unlock();  // ConcurrentModificationException if the lease was lost meanwhile
 *     }
 *   }
 * }
 * }</pre>
 *
 * <p>Or through the registry's {@code executeLocked}:
 *
 * <pre>{@code
 * registry.executeLocked("monthly-report", Duration.ofSeconds(5), () -> reports.rebuild("monthly"));
 * }</pre>
 */
package io.leasehold.spring.integration;
