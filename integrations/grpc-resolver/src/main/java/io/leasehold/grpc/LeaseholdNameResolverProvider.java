package io.leasehold.grpc;

import io.grpc.Attributes;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.leasehold.client.LeaseholdClient;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;

/**
 * Resolves {@code leasehold:} targets to the SERVING instances of a service in the Leasehold
 * registry, for grpc-java channels. See the package documentation for the target forms and how the
 * cluster is found.
 *
 * <p>The instance made by {@link java.util.ServiceLoader} (no-argument constructor) reads the
 * cluster endpoints from the target's authority, else from the {@value #ENDPOINTS_PROPERTY} system
 * property, else from the {@value #ENDPOINTS_ENV} environment variable, and creates the clients
 * itself: one per endpoint list, shared by the channels that use it and closed when the last of
 * their resolvers shuts down. An instance built with a {@link LeaseholdClient} reads through that
 * client, never closes it, and has a higher priority, so registering it on {@link
 * io.grpc.NameResolverRegistry#getDefaultRegistry()} takes the scheme over.
 */
public final class LeaseholdNameResolverProvider extends NameResolverProvider {
  /** The target scheme: {@code leasehold:///<service>}. */
  public static final String SCHEME = "leasehold";

  /** The system property with the cluster endpoints, {@code host:port[,host:port...]}. */
  public static final String ENDPOINTS_PROPERTY = "leasehold.endpoints";

  /**
   * The environment variable with the cluster endpoints, read if the system property is not set.
   */
  public static final String ENDPOINTS_ENV = "LEASEHOLD_ENDPOINTS";

  /** On each resolved address group: the instance's name within its service. */
  public static final Attributes.Key<String> INSTANCE =
      Attributes.Key.create("io.leasehold.grpc.instance");

  /** On each resolved address group: the instance's metadata, as registered. */
  public static final Attributes.Key<Map<String, String>> METADATA =
      Attributes.Key.create("io.leasehold.grpc.metadata");

  /**
   * How long the first listing of a service may take before calls fail UNAVAILABLE (it is still
   * retried).
   */
  static final Duration FIRST_LISTING_TIMEOUT = Duration.ofSeconds(10);

  // Below DNS's 5: the registry makes the scheme of its highest-priority provider the default for
  // targets without one (host:port), and those must stay DNS targets.
  private static final int DEFAULT_PRIORITY = 3;
  private static final int GIVEN_CLIENT_PRIORITY = 4;

  private final Optional<LeaseholdClient> client;
  private final SharedClients shared;
  private final Function<String, String> settings;
  private final Duration firstListingTimeout;

  /**
   * The provider {@link java.util.ServiceLoader} makes: endpoints from the target, the {@value
   * #ENDPOINTS_PROPERTY} system property or the {@value #ENDPOINTS_ENV} environment variable;
   * plaintext clients it creates and closes itself.
   */
  public LeaseholdNameResolverProvider() {
    this(
        Optional.empty(),
        LeaseholdNameResolverProvider::systemSetting,
        endpoints -> LeaseholdClient.builder().endpoints(endpoints).build(),
        FIRST_LISTING_TIMEOUT);
  }

  /**
   * A provider that resolves every {@code leasehold:///<service>} target through {@code client}
   * (TLS, tokens and timeouts as the application set them up). The client stays the application's:
   * close it after the channels that use it. Targets that name endpoints are refused.
   *
   * @param client the client to read the registry with
   */
  public LeaseholdNameResolverProvider(LeaseholdClient client) {
    this(
        Optional.of(Objects.requireNonNull(client, "client")),
        name -> null,
        endpoints -> client,
        FIRST_LISTING_TIMEOUT);
  }

  LeaseholdNameResolverProvider(
      Optional<LeaseholdClient> client,
      Function<String, String> settings,
      Function<List<String>, LeaseholdClient> connect,
      Duration firstListingTimeout) {
    this.client = client;
    this.settings = settings;
    this.shared = new SharedClients(connect);
    this.firstListingTimeout = firstListingTimeout;
  }

  /**
   * A resolver for a {@code leasehold:} target, or null for another scheme.
   *
   * @param targetUri the channel's target
   * @param args the channel's resolver arguments
   * @return the resolver, not started
   * @throws IllegalArgumentException if the target is malformed, or names no cluster this provider
   *     can reach; the message names the part at fault and its rule
   */
  @Override
  public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
    if (!SCHEME.equals(targetUri.getScheme())) {
      return null;
    }
    LeaseholdTarget target = LeaseholdTarget.parse(targetUri);
    Executor offload =
        Optional.ofNullable(args.getOffloadExecutor()).orElse(ForkJoinPool.commonPool());
    return new LeaseholdNameResolver(
        target, source(target, targetUri), args, offload, firstListingTimeout);
  }

  private ClientSource source(LeaseholdTarget target, URI uri) {
    if (client.isPresent()) {
      if (target.endpoints().isPresent()) {
        throw new IllegalArgumentException(
            "authority: must be empty (leasehold:///"
                + target.authority()
                + "): this provider reads through the client it was given (target "
                + uri
                + ")");
      }
      return ClientSource.given(client.get());
    }
    List<String> endpoints =
        target
            .endpoints()
            .or(
                () ->
                    Optional.ofNullable(settings.apply(ENDPOINTS_PROPERTY))
                        .filter(s -> !s.isBlank())
                        .map(s -> Endpoints.parse(ENDPOINTS_PROPERTY, s)))
            .or(
                () ->
                    Optional.ofNullable(settings.apply(ENDPOINTS_ENV))
                        .filter(s -> !s.isBlank())
                        .map(s -> Endpoints.parse(ENDPOINTS_ENV, s)))
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "authority: no cluster endpoints for target "
                            + uri
                            + ": name them in the target (leasehold://host1:7400,host2:7400/"
                            + target.authority()
                            + "), in the "
                            + ENDPOINTS_PROPERTY
                            + " system property or the "
                            + ENDPOINTS_ENV
                            + " environment variable, or register a LeaseholdNameResolverProvider built with a LeaseholdClient"));
    return shared.source(endpoints);
  }

  /**
   * Always available.
   *
   * @return true
   */
  @Override
  protected boolean isAvailable() {
    return true;
  }

  /**
   * 3 for the provider {@link java.util.ServiceLoader} makes; 4 for one built with a client, so it
   * takes the scheme over when registered. Both stay below the DNS provider's 5, which keeps
   * targets without a scheme ({@code host:port}) DNS targets.
   *
   * @return the provider's priority
   */
  @Override
  protected int priority() {
    return client.isPresent() ? GIVEN_CLIENT_PRIORITY : DEFAULT_PRIORITY;
  }

  /**
   * The scheme this provider resolves.
   *
   * @return {@value #SCHEME}
   */
  @Override
  protected String getScheme() {
    return SCHEME;
  }

  /**
   * The scheme a target without one would get, were this factory the channel's default.
   *
   * @return {@value #SCHEME}
   */
  @Override
  public String getDefaultScheme() {
    return SCHEME;
  }

  /**
   * The addresses resolvers of this provider produce.
   *
   * @return {@link InetSocketAddress}
   */
  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  /** How many clients this provider created are open, for tests. */
  int openClients() {
    return shared.openClients();
  }

  private static String systemSetting(String name) {
    return ENDPOINTS_PROPERTY.equals(name) ? System.getProperty(name) : System.getenv(name);
  }
}
