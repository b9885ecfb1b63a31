// Prints the captured tables, comma-separated on one line, from the table registry
// (schemas/src/registry.ts): dev-world/stack/stack.sh passes them to dev-world/stack/sql/publication.sql and
// adds them to the connector's table.include.list, and docker-compose.yml reads them from
// PDA_CAPTURED_TABLES, so neither SQL nor JSON keeps a hand-written copy of the list.
// Imported by relative path, not as @pda/schemas/registry: the stack comes up before (and without)
// `pnpm install`, and Node 24 runs this file as is (type stripping; the registry has no imports).
import { TABLE_NAMES } from '../../schemas/src/registry.ts';

process.stdout.write(`${TABLE_NAMES.join(',')}\n`);
