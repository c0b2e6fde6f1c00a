/**
 * The {@code leasehold:} target scheme for grpc-java: a channel built for {@code
 * leasehold:///payments} sends its calls to the SERVING instances of service {@code payments} in
 * the Leasehold registry, and follows them as they come and go.
 *
 * <h2>Use</h2>
 *
 * <p>Put {@code leasehold-grpc-resolver} on the class path; its provider registers itself through
 * {@link java.util.ServiceLoader}. Instances register as usual; each one's address is the {@code
 * host:port} its gRPC server listens on:
 *
 * <pre>{@code
 * // In each instance of the payments service:
 * Server server = NettyServerBuilder.forPort(8443).addService(new PaymentsService()).build().start();
 * LeaseholdClient leasehold = LeaseholdClient.connect("10.0.0.1:7400", "10.0.0.2:7400", "10.0.0.3:7400");
 * Registration registration = leasehold.blocking()
 *     .register("payments", "payments-7", "10.0.4.7:8443", Map.of("zone", "eu-1"));
 * // ... and before shutting down:
 * registration.setStatus(Registration.DRAINING).join();
 *
 * // In a caller: the cluster's endpoints in the target,
 * ManagedChannel channel = ManagedChannelBuilder
 *     .forTarget("leasehold://10.0.0.1:7400,10.0.0.2:7400/payments")
 *     .defaultLoadBalancingPolicy("round_robin")
 *     .usePlaintext()
 *     .build();
 *
 * // or in -Dleasehold.endpoints=10.0.0.1:7400,10.0.0.2:7400 (or LEASEHOLD_ENDPOINTS),
 * ManagedChannel sameCluster = ManagedChannelBuilder.forTarget("leasehold:///payments")
 *     .defaultLoadBalancingPolicy("round_robin").usePlaintext().build();
 *
 * // or through a client of the application's own (TLS, tokens), which takes the scheme over:
 * LeaseholdClient client = LeaseholdClient.builder().endpoints("10.0.0.1:7400").tls(caCert).build();
 * LeaseholdNameResolverProvider provider = new LeaseholdNameResolverProvider(client);
 * NameResolverRegistry.getDefaultRegistry().register(provider);
 * ManagedChannel viaClient = ManagedChannelBuilder.forTarget("leasehold:///payments")
 *     .defaultLoadBalancingPolicy("round_robin").usePlaintext().build();
 * // ... at the end: channels first, then NameResolverRegistry.getDefaultRegistry().deregister(provider), then client.close().
 * }</pre>
 *
 * <h2>Targets</h2>
 *
 * <ul>
 *   <li>{@code leasehold:///<service>}: the cluster from the {@code leasehold.endpoints} system
 *       property, else the {@code LEASEHOLD_ENDPOINTS} environment variable (both {@code
 *       host:port[,host:port...]}), or the client of a registered provider.
 *   <li>{@code leasehold://<host:port>[,<host:port>...]/<service>}: the cluster named in the
 *       target.
 *   <li>Either with a query that narrows the instances: {@code ?zone=eu-west-1a,eu-west-1b,*} keeps
 *       the SERVING instances of the first of these zones that has one (an instance's zone is its
 *       metadata {@code zone}; {@code *} is any zone), switching as zones empty and fill, and
 *       {@code meta.<key>=<value>} (repeatable, URL-encoded) keeps those with that metadata value:
 *       {@code leasehold:///payments?zone=eu-west-1a,*&meta.version=2.3}. The node's {@code
 *       Resolve} makes the same choice.
 * </ul>
 *
 * <p>The clients the provider creates itself are plaintext, one per endpoint list, shared by every
 * channel using that list and closed when the last of their resolvers shuts down (a channel that
 * goes idle shuts its resolver down; the next call makes a client again). A URI's authority holds
 * an IPv6 address only as its one host ({@code leasehold://[::1]:7400/payments}): give a list with
 * IPv6 addresses in the property or the variable.
 *
 * <p>The service is one non-empty segment: no {@code '/'}, no control characters. A target that
 * breaks a rule (no service, a service with {@code '/'}, an endpoint that is not {@code host:port},
 * a query parameter other than {@code zone} and {@code meta.<key>}, a zone empty or given twice, no
 * endpoints anywhere) makes {@code ManagedChannelBuilder.build()} throw {@link
 * java.lang.IllegalArgumentException} whose message starts with the part at fault ({@code service:
 * must not contain '/' ...}). The channel's default authority is the service.
 *
 * <h2>What the load balancer sees</h2>
 *
 * <ul>
 *   <li>One address group per SERVING instance (every address its {@code host:port} stands for; a
 *       host name is looked up on the channel's offload executor), in instance order, carrying
 *       {@link io.leasehold.grpc.LeaseholdNameResolverProvider#INSTANCE} and {@link
 *       io.leasehold.grpc.LeaseholdNameResolverProvider#METADATA}. An instance whose address is not
 *       {@code host:port} is left out and logged on the channel's logger.
 *   <li>The list is the SDK's routing table of {@code service/<service>/} (List, then Watch from
 *       the listing's revision: no change is missed), so an instance set DRAINING, deregistered or
 *       expired leaves it, and a new SERVING one joins, as soon as the watch delivers the change.
 *   <li>No SERVING instance: the resolver reports {@code UNAVAILABLE: service "payments" has no
 *       SERVING instance in the Leasehold registry}, and calls fail with it instead of waiting.
 *       grpc-java's {@code round_robin} treats an empty list as a resolution error and keeps the
 *       backends it already has while any of them is READY: the last instance of a service keeps
 *       its connections until it stops serving (then calls fail with the message above), while
 *       {@code pick_first} drops its connection at once.
 *   <li>If the first listing does not complete within 10 s (the cluster unreachable), calls fail
 *       UNAVAILABLE naming the service while the listing is retried. Once loaded, the list is kept
 *       through cluster outages (the watch resumes on another node, or lists again).
 *   <li>{@code refresh()} reads the routing table again (the watch keeps it current) and hands the
 *       list to the load balancer even if unchanged; if the first listing failed, it lists again.
 *       {@code shutdown()} stops the watch and gives the client back.
 * </ul>
 */
package io.leasehold.grpc;
