// Relative links in the given Markdown files must resolve: the file exists and, for `file#anchor`,
// the file has a heading with that GitHub-style anchor. Prints one line per broken link and exits 1.
// Run by check-doc-pointers.sh over the repository's tracked Markdown.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** GitHub's heading anchor: lower case, punctuation dropped (except - and _), spaces to dashes. */
const anchorOf = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsCache = new Map();
function anchorsOf(file) {
  let anchors = anchorsCache.get(file);
  if (anchors === undefined) {
    anchors = new Set();
    let fenced = false;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.startsWith('```')) fenced = !fenced;
      if (!fenced && /^#{1,6} /.test(line)) anchors.add(anchorOf(line.replace(/^#+ /, '')));
    }
    anchorsCache.set(file, anchors);
  }
  return anchors;
}

let broken = 0;
for (const file of process.argv.slice(2)) {
  const lines = readFileSync(file, 'utf8').split('\n');
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const resolved = path ? resolve(dirname(file), path) : file;
      let problem;
      if (!existsSync(resolved)) problem = 'no such file';
      else if (anchor && statSync(resolved).isFile() && !anchorsOf(resolved).has(anchor))
        problem = 'no such heading';
      if (problem) {
        console.error(`${file}:${index + 1}: broken link ${target} (${problem})`);
        broken += 1;
      }
    }
  });
}
process.exit(broken > 0 ? 1 : 0);
