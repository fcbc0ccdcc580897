// Vite's `import.meta.glob` (resolved when the test is bundled), for the files a test reads.
interface ImportMeta {
  glob<T>(pattern: string, options: { eager: true; import: "default" }): Record<string, T>;
}
