package io.leasehold.client.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds the members of a public API that mention a wire type: the public and protected
 * constructors, methods, fields and record components of public types, their supertypes, with every
 * generic argument, bound and array component looked into.
 */
final class WireTypeLeaks {
  static final List<String> WIRE_PACKAGES = List.of("io.leasehold.proto", "com.google.protobuf");

  private WireTypeLeaks() {}

  /**
   * The names of the classes under {@code root} in {@code pkg} and its subpackages, except those in
   * {@code excluded}.
   */
  static List<String> classNames(Path root, String pkg, String excluded) {
    Path dir = root.resolve(pkg.replace('.', '/'));
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(f -> f.toString().endsWith(".class"))
          .map(f -> root.relativize(f).toString().replace('/', '.').replace('\\', '.'))
          .map(n -> n.substring(0, n.length() - ".class".length()))
          .filter(n -> !n.startsWith(excluded + "."))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * One line per leaking member of {@code type}; empty if it is not public API or mentions no wire
   * type.
   */
  static List<String> leaks(Class<?> type) {
    List<String> out = new ArrayList<>();
    if (!isApi(type)) {
      return out;
    }
    check(out, type.getName() + " extends", type.getGenericSuperclass());
    for (Type i : type.getGenericInterfaces()) {
      check(out, type.getName() + " implements", i);
    }
    for (Constructor<?> c : type.getDeclaredConstructors()) {
      if (visible(c.getModifiers()) && !c.isSynthetic()) {
        checkExecutable(out, type.getName() + "(constructor)", c);
      }
    }
    for (Method m : type.getDeclaredMethods()) {
      if (visible(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
        check(out, type.getName() + "." + m.getName() + " returns", m.getGenericReturnType());
        checkExecutable(out, type.getName() + "." + m.getName(), m);
      }
    }
    for (Field f : type.getDeclaredFields()) {
      if (visible(f.getModifiers()) && !f.isSynthetic()) {
        check(out, type.getName() + "." + f.getName(), f.getGenericType());
      }
    }
    if (type.isRecord()) {
      for (RecordComponent rc : type.getRecordComponents()) {
        check(out, type.getName() + " component " + rc.getName(), rc.getGenericType());
      }
    }
    return out;
  }

  /** Public, or protected, all the way out through its enclosing types. */
  private static boolean isApi(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (!visible(c.getModifiers()) || c.isAnonymousClass() || c.isLocalClass()) {
        return false;
      }
    }
    return true;
  }

  private static boolean visible(int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  private static void checkExecutable(List<String> out, String where, Executable e) {
    for (Type p : e.getGenericParameterTypes()) {
      check(out, where + " takes", p);
    }
    for (Type x : e.getGenericExceptionTypes()) {
      check(out, where + " throws", x);
    }
    for (TypeVariable<?> v : e.getTypeParameters()) {
      check(out, where + " type parameter", v);
    }
  }

  private static void check(List<String> out, String where, Type type) {
    Set<String> wire = new HashSet<>();
    collect(type, wire, new HashSet<>());
    wire.stream().sorted().forEach(w -> out.add(where + " " + w));
  }

  /** The wire types {@code t} mentions, looking into generic arguments, bounds and arrays. */
  static void collect(Type t, Set<String> wire, Set<Type> seen) {
    if (t == null || !seen.add(t)) {
      return;
    }
    if (t instanceof Class<?> c) {
      Class<?> base = c;
      while (base.isArray()) {
        base = base.getComponentType();
      }
      if (isWire(base)) {
        wire.add(base.getName());
      }
    } else if (t instanceof ParameterizedType p) {
      collect(p.getRawType(), wire, seen);
      collect(p.getOwnerType(), wire, seen);
      for (Type a : p.getActualTypeArguments()) {
        collect(a, wire, seen);
      }
    } else if (t instanceof WildcardType w) {
      for (Type b : w.getUpperBounds()) {
        collect(b, wire, seen);
      }
      for (Type b : w.getLowerBounds()) {
        collect(b, wire, seen);
      }
    } else if (t instanceof TypeVariable<?> v) {
      for (Type b : v.getBounds()) {
        collect(b, wire, seen);
      }
    } else if (t instanceof GenericArrayType a) {
      collect(a.getGenericComponentType(), wire, seen);
    }
  }

  static boolean isWire(Class<?> c) {
    String name = c.getName();
    return WIRE_PACKAGES.stream().anyMatch(p -> name.startsWith(p + "."));
  }
}
