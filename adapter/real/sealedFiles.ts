// The Python files of the sealed run, as the worker writes them into the interpreter's file system
// and the parent names the snapshot that holds them compiled (sealedWorker.ts, sealed.ts).
export const SEALED_PYTHON_FILES = ["tracer.py", "console.py", "processes.py", "holes.py", "sealed.py"] as const;
