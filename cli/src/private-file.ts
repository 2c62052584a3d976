// Files the CLI fills with personal data (rejected import rows, member exports) are readable by
// their owner only, whatever the umask, and also when they already exist with a wider mode:
// their old mode was chosen for other content, if at all.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { CliError } from './errors.js';

const PRIVATE = 0o600;

/**
 * Opens `path` for writing from the start, as mode 0600. An existing regular file is made 0600
 * before it is truncated and written; a device or pipe (`/dev/stdout`, a FIFO) is written as it is.
 */
export async function openPrivateFile(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // No O_TRUNC here: an existing file is emptied only once it is private.
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT, PRIVATE);
  } catch (error) {
    throw new CliError(`Cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, {
      cause: error,
    });
  }
  try {
    const info = await handle.stat();
    if (info.isFile()) {
      if ((info.mode & 0o777) !== PRIVATE) {
        await handle.chmod(PRIVATE).catch((error: unknown) => {
          throw new CliError(
            `${path} cannot be made private to you (${(error as NodeJS.ErrnoException).code}): it belongs to another user.`,
            {
              hint: 'Choose another path; the file would hold personal data.',
              cause: error,
            },
          );
        });
      }
      await handle.truncate(0);
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Writes `content` to a 0600 file (see openPrivateFile). */
export async function writePrivateData(path: string, content: string): Promise<void> {
  const handle = await openPrivateFile(path);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
