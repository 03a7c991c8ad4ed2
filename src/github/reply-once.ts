import type { Context } from 'probot';
import { makeOnceLookingFirst, NOT_REPEATED_BLIND, sinceParameter } from '../adapters/github/index.js';

/**
 * Posts the App's reply to a webhook's event (a command or label it could not carry out), once per delivery. Two
 * ways it could be said twice: the POST's answer lost to a 5xx after GitHub made the comment (the client would ask
 * again blind), and the delivery handled again after a failure (DeliveryHandler retries it). The reply carries the
 * delivery's id as a marker; it is looked for before the first POST and before any POST asked again. Only the
 * comments since the event are read (`since`, GitHub's clock on both sides): a long discussion is not read whole.
 * Replies are rare (refusals and errors), so the look costs one read on a rare path.
 */
export async function replyOnce(context: Context, body: string, eventAt: string | undefined): Promise<void> {
  const marker = `<!-- merge-queue: reply to delivery ${context.id} -->`;
  const eventTime = eventAt ? new Date(eventAt) : null;
  const since = eventTime && Number.isFinite(eventTime.getTime()) ? sinceParameter(eventTime) : null;
  const said = async () => {
    const comments = await context.octokit.paginate(context.octokit.rest.issues.listComments, context.issue({ per_page: 100, ...(since ? { since } : {}) }));
    // A bot's comment: a person quoting the marker does not silence the reply.
    return comments.some((comment) => comment.user?.type === 'Bot' && comment.body?.includes(marker)) ? true : null;
  };
  await makeOnceLookingFirst(async () => {
    await context.octokit.rest.issues.createComment({ ...context.issue({ body: `${body}\n\n${marker}` }), ...NOT_REPEATED_BLIND });
    return true;
  }, said);
}
