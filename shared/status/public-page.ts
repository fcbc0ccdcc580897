// Whether a repository's status page is shown without login: public on GitHub (as GitHub last
// answered for its id) and opted in with `status.public: true`. Asked before anything else is
// read for an anonymous request, so a page nobody may see costs its object no graph scan.

export interface PublicPageFacts {
  /** GitHub's `private` for the repository; null while it was never read. */
  private: boolean | null;
  /** The effective config's `status.public`. */
  optedIn: boolean;
}

export function shownWithoutLogin(facts: PublicPageFacts): boolean {
  return facts.private === false && facts.optedIn;
}
