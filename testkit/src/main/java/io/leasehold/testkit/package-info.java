/**
 * Real Leasehold nodes for the tests of applications that use Leasehold: {@link
 * io.leasehold.testkit.LeaseholdExtension} for JUnit 5, {@link
 * io.leasehold.testkit.LeaseholdCluster} for any test framework. The nodes run inside the test's
 * JVM with their own data directories and free loopback ports; no Docker, no processes, no network
 * beyond loopback.
 */
package io.leasehold.testkit;
