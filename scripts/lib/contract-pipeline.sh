# shellcheck shell=bash
# Sourced by scripts/contract-checks.sh: real data for the contract checks, through the real pipeline
# (PostgreSQL → Debezium → Kafka → ingest → SQLite → api): one company seeded with the dev world's seed CLI under
# a seed of its own, a key issued with the operator tools' keys CLI, both removed again afterwards. Needs the stack's
# env file sourced (scripts/lib/stack-env.sh: PDA_PG_*, PDA_KAFKA_BROKERS, PDA_TOPIC_PREFIX).

SCOPES=sites:read,services:read,equipment:read,equipment-categories:read,consumables:read

free_port() {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# psql on the stack's database, the password in its environment (not on its command line: `ps`).
stack_psql() {
  PGPASSWORD="$PDA_PG_PASSWORD" psql -h "$PDA_PG_HOST" -p "$PDA_PG_PORT" -U "$PDA_PG_USER" -d "$PDA_PG_DATABASE" "$@"
}

# seed_company <seed> → prints the id of the one company it created.
seed_company() {
  local before after
  before=$(stack_psql -tAc 'SELECT id FROM companies ORDER BY id')
  pnpm --silent --filter @pda/dev-world seed -- --companies 1 --sites 2000 --contacts-per-site 1 --services 8 \
    --categories 4 --equipment 12 --consumables 6 --seed "$1" >&2
  after=$(stack_psql -tAc 'SELECT id FROM companies ORDER BY id')
  comm -13 <(echo "$before") <(echo "$after") | head -n 1
}

# issue_key <companyId> → prints the key (shown once by the CLI; kept only in this process).
issue_key() {
  pnpm --silent --filter @pda/operator-tools keys -- issue --company "$1" --name "contract checks" --scopes "$SCOPES" --json |
    node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).key))'
}

# delete_company <companyId>: the company, what it owns and its keys (the seed's deleteCompanies), so the
# shared database is left as found. Run inside the dev-world package, which has both packages.
delete_company() {
  (cd "$repo_root/dev-world" && COMPANY_ID="$1" node --input-type=module-typescript -e "
    import pg from 'pg';
    import { pgConfigFromEnv } from '@pda/operator-tools/pg';
    import { deleteCompanies } from '@pda/dev-world/seed';
    const client = new pg.Client(pgConfigFromEnv());
    await client.connect();
    try { await deleteCompanies(client, [process.env.COMPANY_ID]); } finally { await client.end(); }
  ")
}

# wait_until <seconds> <what> <command...>: polls the command every second; fails when the time is
# up or when one of the processes in the global array `pids` has exited.
wait_until() {
  local seconds="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "contract-checks: $what did not happen within ${seconds}s" >&2
      return 1
    fi
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || {
        echo "contract-checks: a process exited while waiting for $what" >&2
        return 1
      }
    done
    sleep 1
  done
}

http_ok() { # http_ok <url> [header]
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' ${2:+-H "$2"} "$1")
  [ "$code" = 200 ]
}

has_sites() { # has_sites <api base> <key>: the key's company has projected sites
  curl -s -H "Authorization: Bearer $2" "$1/v1/sites?limit=1" | grep -q '"data":\[{'
}

# touch_newest_sites <companyId> <count>: a later change to the company's newest sites by
# created_at (clustered at the end of that order), through the real pipeline.
touch_newest_sites() {
  stack_psql -qc "UPDATE sites SET updated_at = now() WHERE id IN (SELECT id FROM sites WHERE company_id = '$1' ORDER BY created_at DESC, id DESC LIMIT $2)"
}

# changed_since_count <api base> <key> <since>: how many sites the api lists as changed since then
# (a walk of sort=id pages, which the changed plan serves in full).
changed_since_count() {
  node -e '
    const [base, key, since] = process.argv.slice(1);
    let url = `${base}/v1/sites?sort=id&limit=200&fields[sites]=id&filter[updated_since]=${encodeURIComponent(since)}`;
    let count = 0;
    (async () => {
      while (url) {
        const body = await (await fetch(url, { headers: { authorization: `Bearer ${key}` } })).json();
        count += body.data.length;
        url = body.links.next;
      }
      console.log(count);
    })().catch(() => console.log(-1));
  ' "$1" "$2" "$3"
}

# lists_changed_since <api base> <key> <since> <count>: the api lists exactly <count> changed sites.
lists_changed_since() {
  [ "$(changed_since_count "$1" "$2" "$3")" = "$4" ]
}
