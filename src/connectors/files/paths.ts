/**
 * Confinement of file sources. A file source's folder must lie inside one of the configured file
 * roots, and every file it exposes must resolve (symlinks followed) inside that folder. The
 * engine enforces the folders a second time: DuckDB runs with external access limited to them.
 */
import fs from 'node:fs';
import path from 'node:path';

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * The real path of `folder`, or an error when it is missing or outside every root, or when it
 * holds vdb's own data directory (`stateDir`: the catalog with password hashes, the secrets).
 */
export function confineFolder(folder: string, roots: readonly string[], stateDir?: string): string {
  if (!fs.existsSync(folder)) throw new Error(`folder not found: ${folder}`);
  const real = fs.realpathSync(folder);
  if (!fs.statSync(real).isDirectory()) throw new Error(`not a folder: ${folder}`);
  const realRoots = roots.filter((root) => fs.existsSync(root)).map((root) => fs.realpathSync(root));
  if (!realRoots.some((root) => isInside(real, root))) {
    throw new Error(`folder ${folder} is outside the allowed file roots (${roots.join(', ')})`);
  }
  if (stateDir && fs.existsSync(stateDir) && isInside(fs.realpathSync(stateDir), real)) {
    throw new Error(`folder ${folder} holds vdb's data directory (its catalog and secrets); use a folder inside it or elsewhere`);
  }
  return real;
}

/** The real path of `file` when it lies inside `folder` (already real), else null. */
export function confineFile(file: string, folder: string): string | null {
  try {
    const real = fs.realpathSync(file);
    return isInside(real, folder) && fs.statSync(real).isFile() ? real : null;
  } catch {
    return null;
  }
}
