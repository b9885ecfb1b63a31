# shellcheck shell=bash
# Properties from the environment, the convention of the official Kafka and Debezium images:
# PREFIX_FOO_BAR=v → foo.bar=v (lower case, _ → .). Prints them sorted.
env_properties() {
  local prefix="$1" var key
  while IFS= read -r var; do
    key="${var#"$prefix"}"
    key="${key,,}"
    printf '%s=%s\n' "${key//_/.}" "${!var}"
  done < <(compgen -e | grep "^$prefix" | sort)
}
