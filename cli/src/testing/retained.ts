// Memory a test's data retains: heap and array buffers after full collections, with time in
// between for V8 to sweep freed array buffers (it does so on a background thread).
import v8 from 'node:v8';
import vm from 'node:vm';

export async function retainedBytes(): Promise<number> {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
