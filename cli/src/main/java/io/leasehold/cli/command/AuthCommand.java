package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.AuthRole;
import io.leasehold.client.CallerIdentity;
import io.leasehold.client.IdentityRoles;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Permission;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold auth …}: identities, roles and grants. */
@Command(
    name = "auth",
    mixinStandardHelpOptions = true,
    description = {
      "Identities, roles and grants. An identity is a client certificate's CN (or SAN URI leasehold://holder/NAME) "
          + "or a bearer token's; its roles decide what it may do: reader (read, watch), client (its own leases, read, watch), "
          + "admin (everything). A role may be limited to name prefixes.",
      ""
    })
public final class AuthCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          AuthCommand.WhoAmI.class,
          AuthCommand.RoleCommand.class,
          AuthCommand.Grant.class,
          AuthCommand.Revoke.class,
          AuthCommand.ListGrants.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: whoami, role, grant, revoke or list");
  }

  @Command(
      name = "whoami",
      mixinStandardHelpOptions = true,
      description = "Who the cluster takes you to be, and your roles.")
  public static final class WhoAmI extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      CallerIdentity me = Await.of(client.auth().whoAmI());
      String identity = me.authenticationEnabled() ? me.identity() : "(authentication off: anyone)";
      out.print(
          Json.object(
              "identity",
              me.identity(),
              "authenticatedBy",
              me.authenticatedBy(),
              "authenticationEnabled",
              me.authenticationEnabled(),
              "roles",
              me.roles().stream().map(AuthCommand::json).toList()),
          Table.of("IDENTITY", "BY", "ROLES")
              .row(
                  identity,
                  me.authenticatedBy().isEmpty() ? "-" : me.authenticatedBy(),
                  me.roles().isEmpty()
                      ? "-"
                      : String.join(",", me.roles().stream().map(AuthRole::name).toList())));
      return 0;
    }
  }

  @Command(
      name = "role",
      mixinStandardHelpOptions = true,
      description = "Roles: add, remove, list.")
  public static final class RoleCommand implements Runnable {
    /**
     * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds
     * them.
     */
    public static final List<Class<?>> SUBCOMMANDS =
        List.of(RoleAdd.class, RoleRemove.class, RoleList.class);

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "a subcommand is required: add, remove or list");
    }
  }

  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      description =
          "Creates a role, or replaces the one of that name: a permission over every name, or over --prefix names only.")
  public static final class RoleAdd extends ClientCommand {
    @Parameters(
        index = "0",
        paramLabel = "NAME",
        description = "The role's name (letters, digits, '.', '_', '-').")
    String name;

    @Option(
        names = "--permission",
        required = true,
        paramLabel = "reader|client|admin",
        description =
            "What it allows: reader (read, watch), client (its own leases, read, watch), admin (everything).")
    Permission permission;

    @Option(
        names = "--prefix",
        paramLabel = "PREFIX",
        description = "Limit it to names starting with PREFIX (repeatable; none: every name).")
    List<String> prefixes = new ArrayList<>();

    @Override
    protected int run(LeaseholdClient client, Output out) {
      AuthRole role = Await.of(client.auth().addRole(name, permission, prefixes));
      out.print(json(role), roleTable().row(row(role).toArray()));
      return 0;
    }
  }

  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      description = "Removes a role; refused while an identity holds it.")
  public static final class RoleRemove extends ClientCommand {
    @Parameters(paramLabel = "NAME", description = "The role.")
    String name;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      boolean existed = Await.of(client.auth().removeRole(name));
      out.print(
          Json.object("role", name, "existed", existed),
          Table.of("ROLE", "EXISTED").row(name, existed ? "yes" : "no"));
      return 0;
    }
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists every role, the built-in ones included.")
  public static final class RoleList extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<AuthRole> roles = Await.of(client.auth().roles());
      Table t = roleTable();
      roles.forEach(r -> t.row(row(r).toArray()));
      out.print(roles.stream().map(AuthCommand::json).toList(), t);
      return 0;
    }
  }

  @Command(
      name = "grant",
      mixinStandardHelpOptions = true,
      description = "Grants a role to an identity.")
  public static final class Grant extends ClientCommand {
    @Parameters(
        index = "0",
        paramLabel = "IDENTITY",
        description = "A certificate's CN (or SAN URI name) or a token's identity.")
    String identity;

    @Parameters(index = "1", paramLabel = "ROLE", description = "The role.")
    String role;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      boolean already = Await.of(client.auth().grant(identity, role));
      out.print(
          Json.object("identity", identity, "role", role, "alreadyGranted", already),
          Table.of("IDENTITY", "ROLE", "ALREADY GRANTED")
              .row(identity, role, already ? "yes" : "no"));
      return 0;
    }
  }

  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description =
          "Takes a role from an identity; refused when no identity would be left with the admin role over every name.")
  public static final class Revoke extends ClientCommand {
    @Parameters(index = "0", paramLabel = "IDENTITY", description = "The identity.")
    String identity;

    @Parameters(index = "1", paramLabel = "ROLE", description = "The role.")
    String role;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      boolean was = Await.of(client.auth().revoke(identity, role));
      out.print(
          Json.object("identity", identity, "role", role, "wasGranted", was),
          Table.of("IDENTITY", "ROLE", "WAS GRANTED").row(identity, role, was ? "yes" : "no"));
      return 0;
    }
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists the identities that hold roles, with their roles.")
  public static final class ListGrants extends ClientCommand {
    @Parameters(arity = "0..1", paramLabel = "IDENTITY", description = "Only this identity.")
    String identity;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<IdentityRoles> grants = Await.of(client.auth().grants(identity == null ? "" : identity));
      Table t = Table.of("IDENTITY", "ROLES");
      grants.forEach(g -> t.row(g.identity(), String.join(",", g.roles())));
      out.print(
          grants.stream()
              .map(g -> Json.object("identity", g.identity(), "roles", g.roles()))
              .toList(),
          t);
      return 0;
    }
  }

  private static Table roleTable() {
    return Table.of("ROLE", "PERMISSION", "PREFIXES", "BUILT-IN", "REVISION");
  }

  private static List<Object> row(AuthRole r) {
    return List.of(
        r.name(),
        r.permission().name().toLowerCase(Locale.ROOT),
        r.prefixes().isEmpty() ? "(every name)" : String.join(",", r.prefixes()),
        r.builtIn() ? "yes" : "no",
        r.revision());
  }

  static Map<String, Object> json(AuthRole r) {
    return Json.object(
        "name",
        r.name(),
        "permission",
        r.permission().name().toLowerCase(Locale.ROOT),
        "prefixes",
        r.prefixes(),
        "builtIn",
        r.builtIn(),
        "revision",
        r.revision());
  }
}
