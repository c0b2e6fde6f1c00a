/**
 * A ShedLock lock provider on Leasehold leases: {@link
 * io.leasehold.shedlock.LeaseholdLockProvider}.
 *
 * <p>Each ShedLock lock is a lease on {@code shedlock/<lock name>} (the prefix is configurable),
 * held by the client's holder identity and carrying a fencing token. lockAtMostFor ends the lease
 * (the provider releases it then; its TTL ends it if the process dies); lockAtLeastFor keeps the
 * name taken after {@code unlock()}, handed over to the cluster when the time left is within the
 * namespace's TTL bounds, so the name is never free before {@code lockedAt + lockAtLeastFor}.
 *
 * <p>With Spring's scheduler:
 *
 * <pre>{@code
 * @Configuration
 * @EnableScheduling
 * @EnableSchedulerLock(defaultLockAtMostFor = "10m")
 * class SchedulingConfig {
 *   @Bean(destroyMethod = "close")
 *   LeaseholdClient leaseholdClient() {
 *     return LeaseholdClient.builder()
 *         .endpoints("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400")
 *         .build();
 *   }
 *
 *   @Bean(destroyMethod = "close")
 *   LeaseholdLockProvider lockProvider(LeaseholdClient client) {
 *     return LeaseholdLockProvider.builder(client)
 *         .prefix("shedlock/")
 *         .build();
 *   }
 * }
 *
 * @Component
 * class Reports {
 *   private final LeaseholdLockProvider lockProvider;
 *   private final ReportStore store;
 *
 *   Reports(LeaseholdLockProvider lockProvider, ReportStore store) {
 *     this.lockProvider = lockProvider;
 *     this.store = store;
 *   }
 *
 *   @Scheduled(cron = "0 0 * * * *")
 *   @SchedulerLock(name = "hourly-report", lockAtLeastFor = "30s", lockAtMostFor = "15m")
 *   void hourlyReport() {
 *     // runs on one instance at a time; no other instance starts it within 30 s of this start
 *     long token = lockProvider.token("hourly-report").orElseThrow();
 *     store.write(buildReport(), token);  // the store refuses tokens older than one it has seen
 *   }
 * }
 * }</pre>
 *
 * <p>Without Spring:
 *
 * <pre>{@code
 * try (LeaseholdClient client = LeaseholdClient.connect("10.0.0.1:7400", "10.0.0.2:7400");
 *      LeaseholdLockProvider provider = new LeaseholdLockProvider(client)) {
 *   LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
 *   executor.executeWithLock((Runnable) this::rebuildIndex,
 *       new LockConfiguration(ClockProvider.now(), "rebuild-index", Duration.ofMinutes(5), Duration.ofSeconds(10)));
 * }
 * }</pre>
 *
 * <p>Policy: no namespace policy is needed. The lease's TTL is lockAtMostFor kept within the
 * namespace's TTL bounds (the cluster's floor is 2 s; a shorter lockAtMostFor is enforced by the
 * provider releasing the lease in time). Give the namespace no lock-delay, or a name handed over
 * for lockAtLeastFor stays taken that much longer after it expires. The lease name must be allowed
 * by the namespace's name pattern, and with authentication on, the client's identity needs write
 * access to the prefix.
 */
package io.leasehold.shedlock;
