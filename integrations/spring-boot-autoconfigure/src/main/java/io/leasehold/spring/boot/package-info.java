/**
 * Spring Boot auto-configuration for Leasehold: with {@code leasehold.endpoints} set, the context
 * gets a {@code LeaseholdClient} ({@link io.leasehold.spring.boot.LeaseholdAutoConfiguration}), and
 * on it a ShedLock {@code LockProvider} when {@code shedlock-provider-leasehold} is on the class
 * path ({@link io.leasehold.spring.boot.LeaseholdShedLockAutoConfiguration}) and a Spring
 * Integration {@code LockRegistry} when {@code leasehold-spring-integration} is ({@link
 * io.leasehold.spring.boot.LeaseholdLockRegistryAutoConfiguration}). Each bean backs off when the
 * application defines one of its own type; the provider and the registry are also made on a client
 * the application defines itself. With Spring Boot's health support on the class path, the health
 * contributor {@code leasehold} ({@link
 * io.leasehold.spring.boot.LeaseholdHealthContributorAutoConfiguration}) reports whether a leader
 * answers.
 *
 * <p>Every property ({@link io.leasehold.spring.boot.LeaseholdProperties}), in {@code
 * application.properties}:
 *
 * <pre>
 * # Required: what turns the auto-configuration on. Any of the nodes; the rest are learned.
 * leasehold.endpoints=10.0.0.1:7400,10.0.0.2:7400,10.0.0.3:7400
 * # Unique among live clients. Default: the client certificate's identity, else host/pid/random.
 * leasehold.holder=billing-7
 * # TLS: ca alone, or ca, cert and key (PKCS#8) for nodes that require a client certificate.
 * leasehold.tls.ca=/etc/leasehold/ca.pem
 * leasehold.tls.cert=/etc/leasehold/billing-7.pem
 * leasehold.tls.key=/etc/leasehold/billing-7.key
 * # Or a bearer token from a node's --auth-token-file (over TLS); holder is then its identity.
 * #leasehold.token=${LEASEHOLD_TOKEN}
 * leasehold.request-timeout=15s
 * leasehold.attempt-timeout=5s
 * leasehold.retry.initial-backoff=50ms
 * leasehold.retry.max-backoff=2s
 * leasehold.retry.multiplier=2.0
 * leasehold.retry.jitter=0.2
 * # Leases without a TTL of their own live with one session; its TTL defaults to the cluster's.
 * leasehold.session.enabled=true
 * leasehold.session.ttl=10s
 * leasehold.prefer-leader=true
 * leasehold.discover-members=true
 * leasehold.release-on-close=true
 * leasehold.watch-silence-timeout=10s
 * # ShedLock: lock "report" is the lease jobs/report.
 * leasehold.shedlock.enabled=true
 * leasehold.shedlock.prefix=jobs/
 * #leasehold.shedlock.at-least-holder=billing-7/lock-at-least
 * # Spring Integration: key "invoice-42" is the lease orders/invoice-42, with a 30 s TTL of its own.
 * leasehold.lock-registry.enabled=true
 * leasehold.lock-registry.prefix=orders/
 * leasehold.lock-registry.ttl=30s
 * </pre>
 *
 * <p>A value that breaks its rule stops the start with the property, its value and the rule, e.g.
 * {@code Property: leasehold.endpoints[1] ... Reason: must be host:port with a port from 1 to
 * 65535}. What properties cannot say (channel credentials of one's own, interceptors, a callback
 * executor, the clock-drift margin) goes through a {@link
 * io.leasehold.spring.boot.LeaseholdClientBuilderCustomizer} bean.
 */
package io.leasehold.spring.boot;
