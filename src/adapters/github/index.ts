/**
 * The GitHub adapter: what the service wiring and the Probot webhook handlers
 * import. Octokit and Probot types stay behind these names.
 */
export { GitHubHost, GITHUB_HOST, type GitHubHostOptions, type ChecksOutcome } from './github-host.js';
export { installationOctokits, probotAppAuth, AppNotInstalledError, InstallationTokenRefusedError, type GitHubAppAuth, type InstallationOctokits } from './installation-octokits.js';
export { queueProbotOctokit } from './probot-octokit.js';
export type { GitHubRequestRecorder } from './request-metrics.js';
export { createGitHubOctokit, type GitHubOctokitOptions } from './octokit-factory.js';
export { fetchWithTimeout, type BackOffTuning } from './back-off.js';
export type { GitHubClient, GitHubLog, OctokitFor } from './github-client.js';
export { makeOnceLookingFirst, NOT_REPEATED_BLIND, sinceParameter } from './github-client.js';
export { parseMergeCommitTitle } from './merge-commit-title.js';
export { toPullRequestFacts, toMergeability } from './pull-request-facts.js';
export { testBranchName } from './test-branch.js';
export { checkRunName, checkRunExternalId } from './feedback-texts.js';
