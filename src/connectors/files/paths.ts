/**
 * Confinement of file sources. A file source's folder must lie inside one of the configured file
 * roots, and every file it exposes must resolve (symlinks followed) inside that folder. The
 * engine enforces the folders a second time: DuckDB runs with external access limited to them.
 *
 * A path outside the roots gets one answer (outsideRoots), whether it exists, is a file or a
 * folder, or is a symbolic link to any of these: the roots are checked first, on the path as
 * written (without the file system), then on its real path, and only a path whose real path lies
 * inside the roots is looked at any further. Otherwise creating a source would tell anyone who
 * may create one what exists on the server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SourceUnreachableError } from '../types.js';

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * The one answer for every path outside the file roots. It names neither the path nor where a
 * link points, and says nothing of what is there.
 */
export const outsideRoots = (roots: readonly string[]) =>
  new SourceUnreachableError(`the path lies outside the allowed file roots (${roots.join(', ')})`);

/** Symbolic links followed at most while a missing path's real place is worked out (as the kernel's ELOOP). */
const MAX_LINKS = 40;

/**
 * Where `given` (absolute, `..` resolved as written, as Node's fs does) lies with every symbolic
 * link followed, and whether it exists. A missing path's real place is that of its existing
 * part, then the rest as written; a dangling link leads to its target's place.
 */
function realPlace(given: string, links = 0): { real: string; exists: boolean } {
  try {
    return { real: fs.realpathSync(given), exists: true };
  } catch {
    const parent = path.dirname(given);
    if (parent === given || links > MAX_LINKS) return { real: path.resolve(given), exists: false };
    const base = realPlace(parent, links).real;
    let target: string | null = null;
    try {
      target = fs.readlinkSync(given);
    } catch {
      target = null;
    }
    if (target === null) return { real: path.join(base, path.basename(given)), exists: false };
    return { real: realPlace(path.resolve(base, target), links + 1).real, exists: false };
  }
}

/**
 * The real path of `given` and whether it exists, when it lies inside the roots; else
 * outsideRoots, the same whatever is (or is not) at the path.
 */
export function locateInRoots(given: string, roots: readonly string[]): { real: string; exists: boolean } {
  const written = roots.map((root) => path.resolve(root));
  // The roots are the administrator's: their real paths may be read.
  const real = written.filter((root) => fs.existsSync(root)).map((root) => fs.realpathSync(root));
  // First as written, without touching the file system: a path outside is never looked at.
  const resolved = path.resolve(given);
  if (![...written, ...real].some((root) => isInside(resolved, root))) throw outsideRoots(roots);
  // Then for real: a link inside the roots may point outside them, to something or nothing.
  const place = realPlace(resolved);
  if (!real.some((root) => isInside(place.real, root))) throw outsideRoots(roots);
  return place;
}

/**
 * The real path of `folder`, or an error when it is outside every root (outsideRoots), missing,
 * not a folder, or when it holds vdb's own data directory (`stateDir`: the catalog with
 * password hashes, the secrets).
 */
export function confineFolder(folder: string, roots: readonly string[], stateDir?: string): string {
  const { real, exists } = locateInRoots(folder, roots);
  if (!exists) throw new SourceUnreachableError(`folder not found: ${folder}`);
  if (!fs.statSync(real).isDirectory()) throw new SourceUnreachableError(`not a folder: ${folder}`);
  if (stateDir && fs.existsSync(stateDir) && isInside(fs.realpathSync(stateDir), real)) {
    throw new SourceUnreachableError(
      `folder ${folder} holds vdb's data directory (its catalog and secrets); use a folder inside it or elsewhere`,
    );
  }
  return real;
}

/**
 * The real path of a database file (`what`: SQLite, DuckDB), or an error when it is outside
 * every root (outsideRoots) or missing.
 */
export function confineDatabaseFile(file: string, roots: readonly string[], what: string): string {
  const { real, exists } = locateInRoots(file, roots);
  if (!exists) throw new SourceUnreachableError(`${what} file not found: ${file}`);
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
