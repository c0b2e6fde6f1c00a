package io.leasehold.statemachine.core;

/** The lease names of the service registry: instances are {@code service/<service>/<instance>}. */
public final class RegistryNames {
  /** The namespace of registry leases. */
  public static final String NAMESPACE = "service/";

  /** The metadata key that holds an instance's zone. */
  public static final String ZONE_KEY = "zone";

  /** In a filter's zones, every zone. */
  public static final String ANY_ZONE = "*";

  private RegistryNames() {}

  /** The lease name of an instance. */
  public static String leaseName(String service, String instance) {
    return NAMESPACE + service + "/" + instance;
  }

  /** The prefix under which a service's instances live. */
  public static String servicePrefix(String service) {
    return NAMESPACE + service + "/";
  }
}
