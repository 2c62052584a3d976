// Fails fast when npm scripts run on a Node older than the project needs. The `node` dev
// dependency puts Node 24 first on every npm script's PATH, so this also proves that pin works.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `loyalty: Node ${process.version} is too old; run through npm scripts (npm test) so the pinned Node 24 is used.`,
  );
  process.exit(1);
}
console.error(`loyalty: running on Node ${process.version}`);
