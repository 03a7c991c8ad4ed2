import type { RestEndpointMethodTypes } from '@octokit/rest';

/**
 * GitHub's documented response shapes for the routes this adapter calls,
 * taken from @octokit/rest so a misspelt field is a compile error. Types only:
 * nothing here exists at run time, and none of it leaves src/adapters/github/.
 */
type Data<T extends { response: { data: unknown } }> = T['response']['data'];

export type PullRequestData = Data<RestEndpointMethodTypes['pulls']['get']>;
export type PullRequestCommitData = Data<RestEndpointMethodTypes['pulls']['listCommits']>[number];
export type PullRequestListItem = Data<RestEndpointMethodTypes['pulls']['list']>[number];
export type PullRequestReviewData = Data<RestEndpointMethodTypes['pulls']['listReviews']>[number];
export type RefData = Data<RestEndpointMethodTypes['git']['getRef']>;
export type GitCommitData = Data<RestEndpointMethodTypes['git']['getCommit']>;
export type MergeCommitData = Data<RestEndpointMethodTypes['repos']['merge']>;
export type BranchProtectionData = Data<RestEndpointMethodTypes['repos']['getBranchProtection']>;
export type RepositoryData = Data<RestEndpointMethodTypes['repos']['get']>;
export type RulesetData = Data<RestEndpointMethodTypes['repos']['getRepoRuleset']>;
export type BranchRuleData = Data<RestEndpointMethodTypes['repos']['getBranchRules']>[number];
export type CheckRunListData = Data<RestEndpointMethodTypes['checks']['listForRef']>;
export type CheckRunData = CheckRunListData['check_runs'][number];
export type CombinedStatusData = Data<RestEndpointMethodTypes['repos']['getCombinedStatusForRef']>;
export type CommitStatusData = CombinedStatusData['statuses'][number];
export type CommitStatusListData = Data<RestEndpointMethodTypes['repos']['listCommitStatusesForRef']>;
export type PullRequestMergeData = Data<RestEndpointMethodTypes['pulls']['merge']>;
export type IssueCommentData = Data<RestEndpointMethodTypes['issues']['listComments']>[number];
export type InstallationData = Data<RestEndpointMethodTypes['apps']['getRepoInstallation']>;
