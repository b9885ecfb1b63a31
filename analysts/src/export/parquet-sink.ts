import type { KeyValue, SchemaElement } from 'hyparquet';
import { fileWriter, ParquetWriter } from 'hyparquet-writer';

/**
 * Rows into a Parquet file, one row group at a time (hyparquet-writer: pure JavaScript, no native
 * or WebAssembly code, nothing fetched at run time; its built-in Snappy compression). Column types
 * follow the SQLite declared types: INTEGER → INT64, REAL → DOUBLE, TEXT → UTF-8 string. Money
 * amounts stay exact decimal strings and timestamps ISO 8601 strings, as in the files.
 */

export interface ParquetColumn {
  readonly name: string;
  readonly kind: 'int64' | 'double' | 'string';
  readonly nullable: boolean;
}

function schemaOf(columns: readonly ParquetColumn[]): SchemaElement[] {
  return [
    { name: 'root', num_children: columns.length },
    ...columns.map((column): SchemaElement => {
      const repetition_type = column.nullable ? 'OPTIONAL' : 'REQUIRED';
      if (column.kind === 'int64') return { name: column.name, type: 'INT64', repetition_type };
      if (column.kind === 'double') return { name: column.name, type: 'DOUBLE', repetition_type };
      return { name: column.name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type };
    }),
  ];
}

function convert(kind: ParquetColumn['kind'], value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'int64':
      return typeof value === 'bigint' ? value : BigInt(Math.trunc(Number(value)));
    case 'double':
      return Number(value);
    case 'string':
      return typeof value === 'string' ? value : String(value);
  }
}

export class ParquetSink {
  readonly #columns: readonly ParquetColumn[];
  readonly #writer: ParquetWriter;
  readonly #rowGroup: number;
  #data: unknown[][];

  constructor(path: string, columns: readonly ParquetColumn[], rowGroup: number, kvMetadata: KeyValue[]) {
    this.#columns = columns;
    this.#rowGroup = rowGroup;
    this.#data = columns.map(() => []);
    this.#writer = new ParquetWriter({
      writer: fileWriter(path),
      schema: schemaOf(columns),
      kvMetadata,
      createdBy: 'pda projections export (hyparquet-writer)',
    });
  }

  add(row: readonly unknown[]): void {
    for (let i = 0; i < this.#columns.length; i++) {
      this.#data[i]?.push(convert(this.#columns[i]?.kind ?? 'string', row[i]));
    }
    if ((this.#data[0]?.length ?? 0) >= this.#rowGroup) this.#flush();
  }

  #flush(): void {
    const rows = this.#data[0]?.length ?? 0;
    if (rows === 0) return;
    void this.#writer.write({
      columnData: this.#columns.map((column, i) => ({ name: column.name, data: this.#data[i] ?? [] })),
      rowGroupSize: rows,
    });
    this.#data = this.#columns.map(() => []);
  }

  finish(): void {
    this.#flush();
    void this.#writer.finish();
  }
}
