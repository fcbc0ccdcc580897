/** Lets the object take other requests (webhook acknowledgements) before going on. */
export const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
