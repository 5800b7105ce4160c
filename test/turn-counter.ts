/**
 * How many times a zero timer, armed before `run` starts, fired before `run`
 * ended: 0 or 1 when `run` held the thread throughout, more when it took turns
 * (shared/in-turns.ts). For the tests of code that must not hold the runtime's
 * one thread for long.
 *
 * @example
 * expect(await ticksDuring(() => searchInTurns(text, needle))).toBeGreaterThan(2);
 */
export async function ticksDuring(run: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  let going = true;
  const tick = () => {
    ticks++;
    if (going) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  await run();
  going = false;
  return ticks;
}
