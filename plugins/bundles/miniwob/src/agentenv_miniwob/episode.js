// Start one MiniWoB++ episode on a loaded task page, as BrowserGym's MiniWoB tasks do (facts read from
// browsergym-miniwob 0.14.3; this is our own code): the human display (the instruction, the reward panel, the
// click canvas, the START cover) is taken off the page and its click tracker stopped; MiniWoB's own functions
// that need the display (reading the instruction, ending and starting an episode) get it back for the duration
// of the call; then the page's random generator is seeded, the time limit set and the episode started.
// Called with [page seed, time limit in ms].
([seed, maxTime]) => {
  const DISPLAY = ["reward-display", "click-canvas", "sync-task-cover"];
  const parked = {};
  let instruction = null;
  const hide = () => {
    core.clearTimer();
    document.body.removeEventListener("click", core.canvasDrawClick);
    const query = document.getElementById("query");
    instruction = query.cloneNode(true);
    query.innerHTML = "";
    for (const id of DISPLAY) {
      const element = document.getElementById(id);
      element.remove();
      parked[id] = element;
    }
  };
  const show = () => {
    document.getElementById("query").innerHTML = instruction.innerHTML;
    for (const id of Object.keys(parked)) document.body.appendChild(parked[id]);
    core.createDisplay();
  };
  const withDisplay = (original) => function (...args) {
    show();
    const result = original.apply(this, args);
    hide();
    return result;
  };
  core.getUtterance = withDisplay(core.getUtterance);
  core.endEpisode = withDisplay(core.endEpisode);
  core.startEpisodeReal = withDisplay(core.startEpisodeReal);
  hide();
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxTime;
  core.startEpisodeReal();
}
