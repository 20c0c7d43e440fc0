// The import rules of the server's source, enforced by dependency-cruiser in `npm test`. The rules
// are not written here: each folder's README says, on its `Imports:` line, which other folders and
// root files it may import, and this file turns those lines into rules, so a README that is wrong
// fails the tests. Import cycles are refused too, type-only imports included. Every folder under
// the source root must have a README (`PLACARD_IMPORT_RULES_ROOT` points elsewhere, for the test
// that shows the rules fail when they should).
const fs = require('node:fs');
const path = require('node:path');

const ROOT = process.env.PLACARD_IMPORT_RULES_ROOT ?? 'apps/server/src';
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function foldersWithoutReadme(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = path.join(dir, entry.name);
      const here = fs.existsSync(path.join(folder, 'README.md')) ? [] : [folder];
      return [...here, ...foldersWithoutReadme(folder)];
    });
}

/**
 * `Imports: \`domain/\`, \`store/\` (types only, and \`store/errors.ts\`), \`config.ts\`.` → folders,
 * files (at the root or in a folder) and the folders of which only types may be imported, besides
 * the files named; "nothing" → none.
 */
function importsLine(folder) {
  const readme = path.join(ROOT, folder, 'README.md');
  const line = fs
    .readFileSync(readme, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Imports: '));
  if (!line) throw new Error(`${readme} has no "Imports: " line saying what the folder may import`);
  const names = [...line.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
  return {
    folders: names.filter((name) => name.endsWith('/')).map((name) => name.slice(0, -1)),
    files: names.filter((name) => /^[\w/-]+\.ts$/.test(name)),
    typesOnly: [...line.matchAll(/`([\w-]+)\/` \(types only/g)].map((match) => match[1]),
  };
}

const missing = foldersWithoutReadme(ROOT);
if (missing.length > 0) throw new Error(`source folders without a README.md: ${missing.join(', ')}`);

const folders = fs
  .readdirSync(ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const folderRules = folders.map((folder) => {
  const allowed = importsLine(folder);
  const inside = [folder, ...allowed.folders].map(escape).join('|');
  const files = allowed.files.map(escape);
  return {
    name: `${folder}-imports`,
    comment: `${folder}/ may import only what its README's Imports: line names`,
    severity: 'error',
    from: { path: `^${escape(ROOT)}/${escape(folder)}/` },
    to: {
      path: `^${escape(ROOT)}/`,
      pathNot: [`^${escape(ROOT)}/(${inside})/`, ...files.map((file) => `^${escape(ROOT)}/${file}$`)],
    },
  };
});

// A folder allowed only another's types reaches that folder at run time through what it is given
// (http/ through the services, never the store itself); type-only imports are all it may make,
// besides the files its README names.
const typesOnlyRules = folders.flatMap((folder) => {
  const allowed = importsLine(folder);
  return allowed.typesOnly.map((other) => ({
    name: `${folder}-imports-types-of-${other}`,
    comment: `${folder}/ may import only the types of ${other}/, and the files its README's Imports: line names`,
    severity: 'error',
    from: { path: `^${escape(ROOT)}/${escape(folder)}/` },
    to: {
      path: `^${escape(ROOT)}/${escape(other)}/`,
      pathNot: allowed.files.map((file) => `^${escape(ROOT)}/${escape(file)}$`),
      dependencyTypesNot: ['type-only'],
    },
  }));
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'a cycle makes the layers meaningless; move the shared part down instead',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...folderRules,
    ...typesOnlyRules,
  ],
  options: {
    // Type-only imports count: a type cycle is a cycle, and a type from the wrong layer is a
    // dependency on it.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
