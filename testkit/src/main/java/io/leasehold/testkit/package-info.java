/**
 * Real Leasehold nodes for the tests of applications that use Leasehold: {@link
 * io.leasehold.testkit.LeaseholdExtension} for JUnit 5, {@link
 * io.leasehold.testkit.LeaseholdCluster} for any test framework. The nodes run inside the test's
 * JVM with their own data directories and free loopback ports; no Docker, no processes, no network
 * beyond loopback.
 *
 * <p>{@link io.leasehold.testkit.LeaseholdContainer} runs nodes of the container image under
 * Testcontainers instead, one standalone node or a {@link
 * io.leasehold.testkit.LeaseholdContainerCluster} on a Docker network, with mutual TLS on
 * certificates {@link io.leasehold.testkit.LeaseholdTls} makes. Testcontainers (and Bouncy Castle,
 * for TLS) are optional dependencies of the kit: a test that uses the containers declares them.
 */
package io.leasehold.testkit;
