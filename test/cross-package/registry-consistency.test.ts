import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { loadContract } from '@pda/api';
import { migrationsFor, type ProjectionKind } from '@pda/projections/model';
import { documentColumns } from '@pda/projections/read';
import {
  CONTROL_TABLE_NAMES,
  type ColumnType,
  DOCUMENT_TABLE_NAMES,
  REPRESENTATION,
  RESOURCE_NAMES,
  RESOURCES,
  type ResourceDef,
  resourceFields,
  SCOPES,
  TABLE_NAMES,
  TABLES,
  type TableDef,
  type TableName,
  TENANT_TABLE_NAMES,
  tableDocument,
} from '@pda/schemas/registry';
import { describe, expect, test } from 'vitest';

// The table registry (@pda/schemas/registry) is the one list of what is captured, projected and
// exported. What cannot import it is compared with it here; every failure names the list and the
// table or column that disagrees (docs/adding-a-table.md).

const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const read = (path: string): string => readFileSync(root(path), 'utf8');
const registryTables: readonly string[] = TABLE_NAMES;

/** Fails with "<list>: missing <table> ..., unexpected <table> ..." when the two sets differ. */
function expectSameNames(list: string, actual: Iterable<string>, expected: Iterable<string>): void {
  const have = new Set(actual);
  const want = new Set(expected);
  const missing = [...want].filter((name) => !have.has(name));
  const extra = [...have].filter((name) => !want.has(name));
  const problems = [
    ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
    ...(extra.length > 0 ? [`not in the registry: ${extra.join(', ')}`] : []),
  ];
  expect(problems, `${list} disagrees with the table registry: ${problems.join('; ')}`).toEqual([]);
}

describe('the table registry', () => {
  test('resources page over tenant tables and name existing columns', () => {
    for (const name of RESOURCE_NAMES) {
      const resource: ResourceDef = RESOURCES[name];
      const table: TableDef | undefined = (TABLES as Readonly<Record<string, TableDef>>)[resource.table];
      expect(table?.kind, `resource ${name}: table ${resource.table} is not a tenant table`).toBe('tenant');
      const columns = Object.keys(table?.columns ?? {});
      for (const column of resource.sort) {
        expect(
          columns,
          `resource ${name}: sort field ${column} is not a column of ${resource.table}`,
        ).toContain(column);
      }
      expect(Object.keys(resource.document)[0], `resource ${name}: its document must start with id`).toBe(
        'id',
      );
      expect(resource.document.id, `resource ${name}: id must be the id column`).toBe('id');
      for (const column of documentColumns(resource.document)) {
        expect(
          columns,
          `resource ${name}: document reads ${column}, not a column of ${resource.table}`,
        ).toContain(column);
      }
      for (const [relation, def] of Object.entries(resource.relations)) {
        expect(
          Object.keys(resource.document),
          `resource ${name}: relation ${relation} is also a member`,
        ).not.toContain(relation);
        const related: TableDef | undefined = (TABLES as Readonly<Record<string, TableDef>>)[def.table];
        expect(
          related?.kind,
          `resource ${name}: relation ${relation} names ${def.table}, not a tenant table`,
        ).toBe('tenant');
        expect(
          related?.primaryKey,
          `resource ${name}: relation ${relation}: ${def.table} is keyed by id`,
        ).toEqual(['id']);
        const keyTable = def.cardinality === 'one' ? resource.table : def.table;
        const keyColumns = def.cardinality === 'one' ? columns : Object.keys(related?.columns ?? {});
        expect(
          keyColumns,
          `resource ${name}: relation ${relation} key ${def.key} is not a column of ${keyTable}`,
        ).toContain(def.key);
        for (const column of documentColumns(def.document)) {
          expect(
            Object.keys(related?.columns ?? {}),
            `resource ${name}: relation ${relation} reads ${column}, not a column of ${def.table}`,
          ).toContain(column);
        }
      }
    }
    for (const table of TABLE_NAMES) {
      const def: TableDef = TABLES[table];
      for (const column of def.primaryKey) {
        expect(
          Object.keys(def.columns),
          `registry ${table}: primary key ${column} is not a column`,
        ).toContain(column);
      }
    }
  });

  test('one read scope per resource', () => {
    expect(SCOPES.map((entry) => entry.resource)).toEqual(RESOURCE_NAMES);
    for (const entry of SCOPES)
      expect(entry.scope, `scope of ${entry.resource}`).toBe(`${entry.resource}:read`);
  });
});

describe('dev-world/db/schema.sql (the source tables)', () => {
  const sql = read('dev-world/db/schema.sql');
  const ddl = new Map(
    [...sql.matchAll(/CREATE TABLE IF NOT EXISTS (\w+) \(([\s\S]*?)\n\);/g)].map((m) => [
      m[1] ?? '',
      m[2] ?? '',
    ]),
  );

  test('creates exactly the registry tables', () => {
    expectSameNames('dev-world/db/schema.sql CREATE TABLE', ddl.keys(), registryTables);
  });

  test('tenant tables carry company_id', () => {
    for (const table of TENANT_TABLE_NAMES) {
      expect(
        ddl.get(table) ?? '',
        `dev-world/db/schema.sql: tenant table ${table} has no company_id`,
      ).toMatch(/^\s*company_id\s/m);
    }
  });
});

describe('the captured tables (dev-world/stack)', () => {
  // publication.sql and connector.json take the list from the registry at `stack.sh up`
  // (dev-world/stack/captured-tables.ts): a table named in either is a hand-written list coming back.
  test.each(['dev-world/stack/sql/publication.sql', 'dev-world/stack/connector.json'])(
    '%s names no table',
    (file) => {
      const text = read(file);
      const named = registryTables.filter((table) => new RegExp(`\\b${table}\\b`).test(text));
      expect(
        named,
        `${file} names registry tables; its list comes from dev-world/stack/captured-tables.ts`,
      ).toEqual([]);
    },
  );

  test('dev-world/stack/captured-tables.ts prints the registry tables, comma-separated', () => {
    const run = spawnSync(process.execPath, [root('dev-world/stack/captured-tables.ts')], {
      encoding: 'utf8',
    });
    expect(run.status, `node dev-world/stack/captured-tables.ts failed: ${run.stderr}`).toBe(0);
    expect(run.stdout).toBe(`${registryTables.join(',')}\n`);
  });
});

describe('schemas/*.avsc', () => {
  const files = readdirSync(root('schemas')).filter((name) => name.endsWith('.avsc'));

  test('one .avsc per registry table', () => {
    expectSameNames(
      'schemas/*.avsc',
      files.map((name) => name.replace(/\.avsc$/, '')),
      registryTables,
    );
  });

  test.each(TABLE_NAMES)('%s: projected columns come from the captured row', (table) => {
    const avsc = JSON.parse(read(`schemas/${table}.avsc`)) as { fields: { name: string }[] };
    const source = avsc.fields.map((field) => field.name);
    const projected = Object.keys(TABLES[table].columns);
    for (const column of projected) {
      expect(source, `registry ${table}.${column} is not a field of schemas/${table}.avsc`).toContain(column);
    }
    if (TABLES[table].kind === 'tenant') {
      // A company file keeps the whole row but its company_id (the file is the company).
      expectSameNames(
        `schemas/${table}.avsc fields (less company_id) vs registry columns of ${table}`,
        source.filter((name) => name !== 'company_id'),
        projected,
      );
    }
  });
});

describe('stored documents', () => {
  test('a table embedded by a relation and exported too has one document', () => {
    for (const name of RESOURCE_NAMES) {
      for (const [relation, def] of Object.entries((RESOURCES[name] as ResourceDef).relations)) {
        expect(
          def.document,
          `resource ${name}: relation ${relation} renders ${def.table} unlike its own resource`,
        ).toEqual(tableDocument(def.table as TableName));
      }
    }
  });

  test('REPRESENTATION.digest is the digest of the documents (bump the version when they change)', () => {
    const documents = DOCUMENT_TABLE_NAMES.map((table) => [table, tableDocument(table)]);
    const digest = createHash('sha256').update(JSON.stringify(documents)).digest('hex').slice(0, 16);
    expect(
      REPRESENTATION.digest,
      `the documents changed: in schemas/src/registry.ts set REPRESENTATION to { version: ${REPRESENTATION.version + 1}, digest: '${digest}' } (files are re-rendered when ingest opens them)`,
    ).toBe(digest);
  });
});

describe('projection migrations', () => {
  /** Tables the projection keeps for itself (not captured tables), per file kind. */
  const BOOKKEEPING: Record<ProjectionKind, readonly string[]> = {
    company: ['meta', 'tombstones', 'truncations', 'apply_traces'],
    control: [
      'routes',
      'tombstones',
      'ingest_state',
      'truncations',
      'dead_letters',
      'company_files',
      'company_faults',
    ],
  };
  const EXPECTED: Record<ProjectionKind, readonly string[]> = {
    company: TENANT_TABLE_NAMES,
    control: CONTROL_TABLE_NAMES,
  };
  const SQLITE_TYPE: Record<ColumnType, string> = {
    text: 'TEXT NOT NULL',
    'text?': 'TEXT',
    integer: 'INTEGER NOT NULL',
    'integer?': 'INTEGER',
    real: 'REAL NOT NULL',
    'real?': 'REAL',
  };

  function migrated(kind: ProjectionKind): DatabaseSync {
    const db = new DatabaseSync(':memory:');
    for (const step of migrationsFor(kind)) db.exec(step.sql);
    return db;
  }

  interface TableInfo {
    name: string;
    type: string;
    notnull: number;
    pk: number;
  }

  describe.each(['company', 'control'] as const)('%s', (kind) => {
    const db = migrated(kind);
    const tables = (
      db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    )
      .map((row) => row.name)
      .filter((name) => !BOOKKEEPING[kind].includes(name));

    test('create exactly the registry tables of that kind', () => {
      expectSameNames(`projections/src/migrations/${kind} tables`, tables, EXPECTED[kind]);
    });

    test.each(EXPECTED[kind])('%s: columns, types and primary key match the registry', (table) => {
      const def: TableDef = (TABLES as Readonly<Record<string, TableDef>>)[table] as TableDef;
      const info = db.prepare(`PRAGMA table_info("${table}")`).all() as unknown as TableInfo[];
      const columns = info.filter((column) => !column.name.startsWith('_'));
      const file = `projections/src/migrations/${kind}`;
      expect(
        columns.map(
          (column) => `${column.name} ${column.type}${column.notnull || column.pk ? ' NOT NULL' : ''}`,
        ),
        `${file} columns of ${table} (in order) vs the registry`,
      ).toEqual(Object.entries(def.columns).map(([name, type]) => `${name} ${SQLITE_TYPE[type]}`));
      expect(
        info
          .filter((column) => column.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((column) => column.name),
        `${file} primary key of ${table} vs the registry`,
      ).toEqual(def.primaryKey);
      expect(
        info.map((column) => column.name),
        `${file}: ${table} has no _src_lsn`,
      ).toContain('_src_lsn');
      if (kind === 'company') {
        expect(
          info.map((column) => column.name),
          `${file}: ${table} has no _changed_us`,
        ).toContain('_changed_us');
      }
      // A table with a stored document keeps it in a nullable TEXT column _json; others have none.
      const document = info.find((column) => column.name === '_json');
      const hasDocument = tableDocument(table as TableName) !== undefined;
      expect(
        document && `${document.type}${document.notnull ? ' NOT NULL' : ''}`,
        `${file}: ${table} ${hasDocument ? 'needs a column _json TEXT (its stored document)' : 'has no stored document, so no _json'}`,
      ).toBe(hasDocument ? 'TEXT' : undefined);
    });

    if (kind === 'company') {
      test.each(RESOURCE_NAMES)(
        'resource %s: every sort field is indexed as (column, id, _changed_us) and _changed_us as (_changed_us, id)',
        (name) => {
          const resource: ResourceDef = RESOURCES[name];
          const indexes = (
            db.prepare(`PRAGMA index_list("${resource.table}")`).all() as unknown as { name: string }[]
          ).map((index) =>
            (db.prepare(`PRAGMA index_info("${index.name}")`).all() as unknown as { name: string }[])
              .map((column) => column.name)
              .join(','),
          );
          // The since pages walk these (projections/src/read/page-sql.ts, sortIndex and changeIndex).
          for (const column of resource.sort.filter((c) => c !== 'id')) {
            expect(
              indexes,
              `projections/src/migrations/company: no index (${column}, id, _changed_us) on ${resource.table} (resource ${name})`,
            ).toContain(`${column},id,_changed_us`);
          }
          expect(indexes, `no index (id, _changed_us) on ${resource.table}`).toContain('id,_changed_us');
          expect(indexes, `no index (_changed_us, id) on ${resource.table}`).toContain('_changed_us,id');
        },
      );
    }
  });
});

describe('api/openapi.yaml', () => {
  const contract = loadContract();
  /** Operations that are not a registry resource's list or item. */
  const OTHER = ['getHealth', 'getVersion', 'getMe', 'listScopes', 'listDeletions', 'listChanges'];
  const byId = contract.operations;

  const alternatives = (names: readonly string[]): string =>
    names.length === 1 ? (names[0] ?? '') : `(${names.join('|')})`;
  const fieldsPattern = (fields: readonly string[]): string =>
    `^${alternatives(fields)}(,${alternatives(fields)})*$`;
  const sortPattern = (sort: readonly string[]): string =>
    `^-?${alternatives(sort)}(,-?${alternatives(sort)})*$`;
  const includePattern = (relations: readonly string[]): string =>
    `^${alternatives(relations)}(,${alternatives(relations)}){0,4}$`;

  function queryParameter(operationId: string, name: string): { pattern?: string } | undefined {
    const querystring = byId.get(operationId)?.schema.querystring as
      | { properties?: Record<string, { pattern?: string }> }
      | undefined;
    return querystring?.properties?.[name];
  }

  test('every operation is a registry resource operation or a known non-resource one', () => {
    const expected = [
      ...OTHER,
      ...RESOURCE_NAMES.flatMap((name) => [RESOURCES[name].operations.list, RESOURCES[name].operations.get]),
    ];
    expectSameNames('api/openapi.yaml operationIds', byId.keys(), expected);
  });

  test('the deletions and change feeds name exactly the registry resources (filter[type] and the type enum)', () => {
    for (const feed of ['listDeletions', 'listChanges']) {
      expect(
        queryParameter(feed, 'filter[type]')?.pattern,
        `api/openapi.yaml ${feed}: filter[type] pattern vs the registry resources`,
      ).toBe(fieldsPattern(RESOURCE_NAMES));
    }
    const document = contract.document as unknown as {
      components: { schemas: Record<string, { enum?: string[] }> };
    };
    const schemas = document.components.schemas;
    expect(schemas.ResourceType?.enum, 'api/openapi.yaml components.schemas.ResourceType').toEqual([
      ...RESOURCE_NAMES,
    ]);
  });

  describe.each(RESOURCE_NAMES)('resource %s', (name) => {
    const resource: ResourceDef = RESOURCES[name];
    const list = resource.operations.list;
    const get = resource.operations.get;

    test('paths and scopes', () => {
      expect(byId.get(list)?.path, `api/openapi.yaml ${list}: path of resource ${name}`).toBe(resource.path);
      expect(byId.get(get)?.path, `api/openapi.yaml ${get}: path of resource ${name}`).toBe(
        `${resource.path}/{${resource.itemParam}}`,
      );
      for (const operation of [list, get]) {
        expect(
          byId.get(operation)?.scopes,
          `api/openapi.yaml ${operation}: scopes of resource ${name}`,
        ).toEqual([resource.scope]);
      }
    });

    test('fields[...] pattern lists the registry fields', () => {
      for (const operation of [list, get]) {
        expect(
          queryParameter(operation, `fields[${name}]`)?.pattern,
          `api/openapi.yaml ${operation}: fields[${name}] pattern vs the registry's fields of ${name}`,
        ).toBe(fieldsPattern(resourceFields(name)));
      }
    });

    test('sort pattern lists the registry sort fields', () => {
      expect(
        queryParameter(list, 'sort')?.pattern,
        `api/openapi.yaml ${list}: sort pattern vs the registry's sort fields of ${name}`,
      ).toBe(sortPattern(resource.sort));
    });

    test('include pattern lists the registry relations', () => {
      const relations = Object.keys(resource.relations);
      for (const operation of [list, get]) {
        const include = queryParameter(operation, 'include');
        if (relations.length === 0) {
          expect(include, `api/openapi.yaml ${operation}: include on ${name}, which has no relations`).toBe(
            undefined,
          );
        } else {
          expect(
            include?.pattern,
            `api/openapi.yaml ${operation}: include pattern vs the registry's relations of ${name}`,
          ).toBe(includePattern(relations));
        }
      }
    });
  });
});
