/** Counts the turns of the event loop until stopped: a callback that queues itself again runs once a turn. */
export function turnCounter(): { readonly turns: number; stop(): number } {
  let turns = 0;
  let counting = true;
  const countTurn = () => {
    turns++;
    if (counting) setImmediate(countTurn);
  };
  setImmediate(countTurn);
  return {
    get turns() {
      return turns;
    },
    stop() {
      counting = false;
      return turns;
    },
  };
}
