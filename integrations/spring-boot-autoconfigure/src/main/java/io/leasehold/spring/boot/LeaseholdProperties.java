package io.leasehold.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code leasehold.*} properties: the client's settings, and those of the ShedLock provider and
 * the Spring Integration lock registry built on it. Unset client settings keep the SDK's defaults.
 *
 * <p>The properties check themselves when they are bound: a value that breaks a rule stops the
 * application's start with the property's name, its value and the rule (an endpoint that is not
 * {@code host:port}, a duration that is not positive, a TLS file that cannot be read, a prefix
 * without a namespace).
 */
@ConfigurationProperties("leasehold")
public class LeaseholdProperties implements Validator {
  /**
   * Client addresses (host:port) of any of the cluster's nodes; the client learns the other members
   * from the cluster. Setting it is what creates the LeaseholdClient bean.
   */
  private List<String> endpoints = new ArrayList<>();

  /**
   * The holder identity of this client's leases, unique among live clients. Default: the client
   * certificate's identity with mutual TLS, else host/pid/random.
   */
  private String holder;

  /**
   * A bearer token from a node's --auth-token-file, sent with every call; nodes with authentication
   * on take the holder to be the token's identity. Send tokens only over TLS.
   */
  private String token;

  /** TLS to the nodes (default: plaintext). */
  private final Tls tls = new Tls();

  /** The time a request may take, retries included (SDK default 15s). */
  private Duration requestTimeout;

  /** The time one attempt may take before it is retried on another node (SDK default 5s). */
  private Duration attemptTimeout;

  /** The backoff between retries of a request. */
  private final Retry retry = new Retry();

  /** The client's session, which leases without a TTL of their own live with. */
  private final Session session = new Session();

  /** Whether writes go to the leader when it is known (SDK default true). */
  private Boolean preferLeader;

  /** Whether the members the cluster reports are added to the endpoints (SDK default true). */
  private Boolean discoverMembers;

  /**
   * Whether held leases are released and instances deregistered when the client closes (SDK default
   * true).
   */
  private Boolean releaseOnClose;

  /** A watch stream silent this long is reopened on another node (SDK default 10s). */
  private Duration watchSilenceTimeout;

  /** The ShedLock LockProvider. */
  private final Shedlock shedlock = new Shedlock();

  /** The Spring Integration LockRegistry. */
  private final LockRegistry lockRegistry = new LockRegistry();

  /** Properties with nothing set. */
  public LeaseholdProperties() {}

  /**
   * The client addresses of the cluster's nodes.
   *
   * @return the endpoints, host:port each
   */
  public List<String> getEndpoints() {
    return endpoints;
  }

  /**
   * Sets the client addresses of the cluster's nodes.
   *
   * @param endpoints the endpoints, host:port each
   */
  public void setEndpoints(List<String> endpoints) {
    this.endpoints = endpoints;
  }

  /**
   * The holder identity.
   *
   * @return the holder, or null for the SDK's default
   */
  public String getHolder() {
    return holder;
  }

  /**
   * Sets the holder identity.
   *
   * @param holder the holder, unique among live clients
   */
  public void setHolder(String holder) {
    this.holder = holder;
  }

  /**
   * The bearer token.
   *
   * @return the token, or null for none
   */
  public String getToken() {
    return token;
  }

  /**
   * Sets the bearer token.
   *
   * @param token the token, printable ASCII without spaces
   */
  public void setToken(String token) {
    this.token = token;
  }

  /**
   * The TLS settings.
   *
   * @return the TLS settings
   */
  public Tls getTls() {
    return tls;
  }

  /**
   * The request timeout.
   *
   * @return the timeout, or null for the SDK's default
   */
  public Duration getRequestTimeout() {
    return requestTimeout;
  }

  /**
   * Sets the request timeout.
   *
   * @param requestTimeout a positive duration
   */
  public void setRequestTimeout(Duration requestTimeout) {
    this.requestTimeout = requestTimeout;
  }

  /**
   * The attempt timeout.
   *
   * @return the timeout, or null for the SDK's default
   */
  public Duration getAttemptTimeout() {
    return attemptTimeout;
  }

  /**
   * Sets the attempt timeout.
   *
   * @param attemptTimeout a positive duration
   */
  public void setAttemptTimeout(Duration attemptTimeout) {
    this.attemptTimeout = attemptTimeout;
  }

  /**
   * The retry backoff settings.
   *
   * @return the retry settings
   */
  public Retry getRetry() {
    return retry;
  }

  /**
   * The session settings.
   *
   * @return the session settings
   */
  public Session getSession() {
    return session;
  }

  /**
   * Whether writes go to the leader when it is known.
   *
   * @return the setting, or null for the SDK's default
   */
  public Boolean getPreferLeader() {
    return preferLeader;
  }

  /**
   * Sets whether writes go to the leader when it is known.
   *
   * @param preferLeader the setting
   */
  public void setPreferLeader(Boolean preferLeader) {
    this.preferLeader = preferLeader;
  }

  /**
   * Whether the members the cluster reports are added to the endpoints.
   *
   * @return the setting, or null for the SDK's default
   */
  public Boolean getDiscoverMembers() {
    return discoverMembers;
  }

  /**
   * Sets whether the members the cluster reports are added to the endpoints.
   *
   * @param discoverMembers the setting
   */
  public void setDiscoverMembers(Boolean discoverMembers) {
    this.discoverMembers = discoverMembers;
  }

  /**
   * Whether closing the client releases its leases and deregisters its instances.
   *
   * @return the setting, or null for the SDK's default
   */
  public Boolean getReleaseOnClose() {
    return releaseOnClose;
  }

  /**
   * Sets whether closing the client releases its leases and deregisters its instances.
   *
   * @param releaseOnClose the setting
   */
  public void setReleaseOnClose(Boolean releaseOnClose) {
    this.releaseOnClose = releaseOnClose;
  }

  /**
   * The time after which a silent watch stream is reopened.
   *
   * @return the timeout, or null for the SDK's default
   */
  public Duration getWatchSilenceTimeout() {
    return watchSilenceTimeout;
  }

  /**
   * Sets the time after which a silent watch stream is reopened.
   *
   * @param watchSilenceTimeout a positive duration
   */
  public void setWatchSilenceTimeout(Duration watchSilenceTimeout) {
    this.watchSilenceTimeout = watchSilenceTimeout;
  }

  /**
   * The ShedLock provider's settings.
   *
   * @return the settings
   */
  public Shedlock getShedlock() {
    return shedlock;
  }

  /**
   * The lock registry's settings.
   *
   * @return the settings
   */
  public LockRegistry getLockRegistry() {
    return lockRegistry;
  }

  /**
   * Checks only these properties.
   *
   * @param type the type being validated
   * @return whether it is {@link LeaseholdProperties}
   */
  @Override
  public boolean supports(Class<?> type) {
    return LeaseholdProperties.class.isAssignableFrom(type);
  }

  /**
   * Rejects each value that breaks its rule, under the property's name.
   *
   * @param target these properties
   * @param errors where the rejections go
   */
  @Override
  public void validate(Object target, Errors errors) {
    LeaseholdProperties p = (LeaseholdProperties) target;
    if (p.endpoints != null) {
      for (int i = 0; i < p.endpoints.size(); i++) {
        String rule = endpointProblem(p.endpoints.get(i));
        if (rule != null) {
          errors.rejectValue(
              "endpoints[" + i + "]",
              "leasehold.endpoint",
              "must be host:port with a port from 1 to 65535; this one " + rule);
        }
      }
    }
    if (p.holder != null && p.holder.isBlank()) {
      errors.rejectValue("holder", "leasehold.holder", "must not be blank");
    }
    if (p.token != null
        && (p.token.isBlank() || p.token.chars().anyMatch(c -> c < 0x21 || c > 0x7e))) {
      errors.rejectValue("token", "leasehold.token", "must be printable ASCII without spaces");
    }
    p.tls.validate(errors);
    positive(errors, "request-timeout", p.requestTimeout);
    positive(errors, "attempt-timeout", p.attemptTimeout);
    positive(errors, "watch-silence-timeout", p.watchSilenceTimeout);
    p.retry.validate(errors);
    positive(errors, "session.ttl", p.session.ttl);
    prefix(errors, "shedlock.prefix", p.shedlock.prefix);
    if (p.shedlock.atLeastHolder != null && p.shedlock.atLeastHolder.isBlank()) {
      errors.rejectValue("shedlock.at-least-holder", "leasehold.holder", "must not be blank");
    }
    prefix(errors, "lock-registry.prefix", p.lockRegistry.prefix);
    positive(errors, "lock-registry.ttl", p.lockRegistry.ttl);
  }

  /** What is wrong with one endpoint, or null if it is a good {@code host:port}. */
  static String endpointProblem(String entry) {
    if (entry == null || entry.isBlank()) {
      return "is empty";
    }
    String e = entry.trim();
    int colon = e.lastIndexOf(':');
    if (colon < 0 || (e.startsWith("[") && colon < e.indexOf(']'))) {
      return "has no port";
    }
    String host = e.substring(0, colon);
    if (host.isEmpty() || host.equals("[]")) {
      return "has no host";
    }
    if (host.startsWith("[") != host.endsWith("]")
        || (!host.startsWith("[") && host.contains(":"))) {
      return "has an IPv6 host outside brackets, e.g. [::1]:7400";
    }
    String port = e.substring(colon + 1);
    if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return "has a port that is not a number";
    }
    int n = Integer.parseInt(port);
    if (n < 1 || n > 65535) {
      return "has port " + n + ", out of range";
    }
    return null;
  }

  private static void positive(Errors errors, String field, Duration d) {
    if (d != null && (d.isNegative() || d.isZero())) {
      errors.rejectValue(field, "leasehold.positive", "must be a positive duration");
    }
  }

  private static void prefix(Errors errors, String field, String prefix) {
    if (prefix == null || prefix.indexOf('/') <= 0) {
      errors.rejectValue(
          field, "leasehold.prefix", "must start with a namespace and a slash, e.g. jobs/");
    }
  }

  /**
   * TLS to the nodes: the CA that signed their certificates, and a client certificate for mutual
   * TLS.
   */
  public static class Tls {
    /** PEM file of the CA that signed the nodes' certificates; setting it turns TLS on. */
    private Path ca;

    /** The client's certificate (PEM), for nodes that require one; needs ca and key. */
    private Path cert;

    /** The client certificate's private key (PEM, PKCS#8); needs ca and cert. */
    private Path key;

    /** No TLS. */
    public Tls() {}

    /**
     * The CA certificate file.
     *
     * @return the file, or null for plaintext
     */
    public Path getCa() {
      return ca;
    }

    /**
     * Sets the CA certificate file.
     *
     * @param ca a PEM file
     */
    public void setCa(Path ca) {
      this.ca = ca;
    }

    /**
     * The client certificate file.
     *
     * @return the file, or null for none
     */
    public Path getCert() {
      return cert;
    }

    /**
     * Sets the client certificate file.
     *
     * @param cert a PEM file
     */
    public void setCert(Path cert) {
      this.cert = cert;
    }

    /**
     * The client certificate's private key file.
     *
     * @return the file, or null for none
     */
    public Path getKey() {
      return key;
    }

    /**
     * Sets the client certificate's private key file.
     *
     * @param key a PEM file holding a PKCS#8 key
     */
    public void setKey(Path key) {
      this.key = key;
    }

    void validate(Errors errors) {
      readable(errors, "tls.ca", ca);
      readable(errors, "tls.cert", cert);
      readable(errors, "tls.key", key);
      if ((cert == null) != (key == null)) {
        errors.rejectValue(
            cert == null ? "tls.cert" : "tls.key",
            "leasehold.tls",
            "must be set together with leasehold.tls." + (cert == null ? "key" : "cert"));
      }
      if (ca == null && (cert != null || key != null)) {
        errors.rejectValue(
            "tls.ca",
            "leasehold.tls",
            "is required with a client certificate (leasehold.tls.cert and key)");
      }
    }

    private static void readable(Errors errors, String field, Path file) {
      if (file != null && !(Files.isRegularFile(file) && Files.isReadable(file))) {
        errors.rejectValue(field, "leasehold.file", "must be a readable file");
      }
    }
  }

  /**
   * Backoff between retries: exponential from initial-backoff by multiplier, capped at max-backoff,
   * spread by jitter.
   */
  public static class Retry {
    /** The first delay (SDK default 50ms). */
    private Duration initialBackoff;

    /** The largest delay (SDK default 2s). */
    private Duration maxBackoff;

    /** Growth per retry, at least 1 (SDK default 2.0). */
    private Double multiplier;

    /** The random spread of each delay, between 0 and 1 (SDK default 0.2). */
    private Double jitter;

    /** The SDK's default backoff. */
    public Retry() {}

    /**
     * The first delay.
     *
     * @return the delay, or null for the SDK's default
     */
    public Duration getInitialBackoff() {
      return initialBackoff;
    }

    /**
     * Sets the first delay.
     *
     * @param initialBackoff a positive duration
     */
    public void setInitialBackoff(Duration initialBackoff) {
      this.initialBackoff = initialBackoff;
    }

    /**
     * The largest delay.
     *
     * @return the delay, or null for the SDK's default
     */
    public Duration getMaxBackoff() {
      return maxBackoff;
    }

    /**
     * Sets the largest delay.
     *
     * @param maxBackoff at least the initial backoff
     */
    public void setMaxBackoff(Duration maxBackoff) {
      this.maxBackoff = maxBackoff;
    }

    /**
     * The growth per retry.
     *
     * @return the multiplier, or null for the SDK's default
     */
    public Double getMultiplier() {
      return multiplier;
    }

    /**
     * Sets the growth per retry.
     *
     * @param multiplier at least 1
     */
    public void setMultiplier(Double multiplier) {
      this.multiplier = multiplier;
    }

    /**
     * The random spread of each delay.
     *
     * @return the jitter, or null for the SDK's default
     */
    public Double getJitter() {
      return jitter;
    }

    /**
     * Sets the random spread of each delay.
     *
     * @param jitter between 0 and 1
     */
    public void setJitter(Double jitter) {
      this.jitter = jitter;
    }

    boolean isSet() {
      return initialBackoff != null || maxBackoff != null || multiplier != null || jitter != null;
    }

    void validate(Errors errors) {
      positive(errors, "retry.initial-backoff", initialBackoff);
      positive(errors, "retry.max-backoff", maxBackoff);
      if (multiplier != null && !(multiplier >= 1.0 && !multiplier.isInfinite())) {
        errors.rejectValue("retry.multiplier", "leasehold.range", "must be at least 1");
      }
      if (jitter != null && !(jitter >= 0.0 && jitter <= 1.0)) {
        errors.rejectValue("retry.jitter", "leasehold.range", "must be between 0 and 1");
      }
    }
  }

  /** The client's session: one keep-alive for all the leases attached to it. */
  public static class Session {
    /**
     * Whether leases acquired without a TTL of their own live with the client's session (SDK
     * default true); with false every lease has its own TTL and is renewed one by one.
     */
    private Boolean enabled;

    /** The session's TTL (default: the cluster's default TTL). */
    private Duration ttl;

    /** The SDK's default session. */
    public Session() {}

    /**
     * Whether leases are attached to the client's session.
     *
     * @return the setting, or null for the SDK's default
     */
    public Boolean getEnabled() {
      return enabled;
    }

    /**
     * Sets whether leases are attached to the client's session.
     *
     * @param enabled the setting
     */
    public void setEnabled(Boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The session's TTL.
     *
     * @return the TTL, or null for the cluster's default
     */
    public Duration getTtl() {
      return ttl;
    }

    /**
     * Sets the session's TTL.
     *
     * @param ttl a positive duration
     */
    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }
  }

  /** The ShedLock LockProvider: each lock a lease on prefix + lock name. */
  public static class Shedlock {
    /** Whether to create the LeaseholdLockProvider when ShedLock is on the class path. */
    private boolean enabled = true;

    /** What is put before each lock name to make its lease name: a namespace and a slash first. */
    private String prefix = "shedlock/";

    /**
     * The holder a lease is handed to for what remains of lockAtLeastFor after unlock(); no live
     * client may use it. Default: the client's holder followed by /lock-at-least.
     */
    private String atLeastHolder;

    /** The defaults. */
    public Shedlock() {}

    /**
     * Whether the provider is created.
     *
     * @return the setting
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the provider is created.
     *
     * @param enabled the setting
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The lease name prefix.
     *
     * @return the prefix
     */
    public String getPrefix() {
      return prefix;
    }

    /**
     * Sets the lease name prefix.
     *
     * @param prefix a namespace, a slash and optionally more
     */
    public void setPrefix(String prefix) {
      this.prefix = prefix;
    }

    /**
     * The holder of leases handed over for lockAtLeastFor.
     *
     * @return the holder, or null for the default
     */
    public String getAtLeastHolder() {
      return atLeastHolder;
    }

    /**
     * Sets the holder of leases handed over for lockAtLeastFor.
     *
     * @param atLeastHolder a holder no live client uses
     */
    public void setAtLeastHolder(String atLeastHolder) {
      this.atLeastHolder = atLeastHolder;
    }
  }

  /** The Spring Integration LockRegistry: each lock a lease on prefix + key. */
  public static class LockRegistry {
    /** Whether to create the LeaseholdLockRegistry when Spring Integration is on the class path. */
    private boolean enabled = true;

    /** What is put before each key to make its lease name: a namespace and a slash first. */
    private String prefix = "spring-lock/";

    /**
     * A TTL of their own for the registry's leases, instead of living with the client's session:
     * how long a name stays taken after this process stops renewing it.
     */
    private Duration ttl;

    /** The defaults. */
    public LockRegistry() {}

    /**
     * Whether the registry is created.
     *
     * @return the setting
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the registry is created.
     *
     * @param enabled the setting
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The lease name prefix.
     *
     * @return the prefix
     */
    public String getPrefix() {
      return prefix;
    }

    /**
     * Sets the lease name prefix.
     *
     * @param prefix a namespace, a slash and optionally more
     */
    public void setPrefix(String prefix) {
      this.prefix = prefix;
    }

    /**
     * The leases' own TTL.
     *
     * @return the TTL, or null for the client's session
     */
    public Duration getTtl() {
      return ttl;
    }

    /**
     * Sets the leases' own TTL.
     *
     * @param ttl a positive duration
     */
    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }
  }
}
