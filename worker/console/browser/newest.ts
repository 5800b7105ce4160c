/**
 * Orders the answers that paint one view: each request takes a ticket, and
 * only the newest ticket's answer may paint, so a slow answer to an older
 * request never overwrites what a newer one showed (or is about to show).
 */
export function newestWins(): () => () => boolean {
  let newest = 0;
  return () => {
    const ticket = ++newest;
    return () => ticket === newest;
  };
}
