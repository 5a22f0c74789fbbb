// Loaded by every page the live preview serves (a file: the pages'
// Content-Security-Policy runs no inline script): poll the preview's status
// and reload after each rebuild, good or failed (the page then has its banner).
(() => {
  let seen = null;
  const poll = async () => {
    try {
      const status = await (await fetch("/_live/status", {cache: "no-store"})).json();
      if (seen !== null && status.build !== seen) location.reload();
      seen = status.build;
    } catch { /* the preview was stopped */ }
    setTimeout(poll, 250);
  };
  poll();
})();
