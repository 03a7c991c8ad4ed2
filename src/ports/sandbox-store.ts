/** Where the sandbox host keeps its simulated repositories: one JSON document per repository. */
export interface SandboxStore {
  load(repoKey: string): Promise<string | null>;
  save(repoKey: string, json: string): Promise<void>;
}
