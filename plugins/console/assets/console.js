"use strict";
// The console's only script: charts on the overview, the catalog file upload and its live progress.
// Every page works without it; it adds what a browser without script cannot do.
(function () {
  function onReady(run) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
    else run();
  }

  function uploadForms() {
    document.querySelectorAll("form[data-upload]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var file = form.querySelector("input[type=file]").files[0];
        var said = form.querySelector("[data-upload-status]");
        if (!file) return;
        said.textContent = "Sending " + file.name + "…";
        fetch(form.getAttribute("data-upload"), { method: "PUT", body: file, headers: { "content-type": "application/x-ndjson" } })
          .then(function (response) {
            if (!response.ok) return response.text().then(function (text) { throw new Error(response.status + " " + text); });
            said.textContent = "Sent. Processing…";
            window.location.assign(form.getAttribute("data-after"));
          })
          .catch(function (error) {
            said.textContent = "The file was not sent: " + error.message;
          });
      });
    });
  }

  function progress() {
    var section = document.querySelector("[data-progress]");
    if (!section) return;
    var text = section.querySelector("[data-progress-text]");
    var timer = setInterval(function () {
      fetch(section.getAttribute("data-progress"), { headers: { accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (state) {
          text.textContent = state.productsReceived + " products read, " + state.productsProcessed + " valid, " + state.errors + " errors so far.";
          if (state.status !== "validating" && state.status !== "validated") {
            clearInterval(timer);
            window.location.reload();
          }
        })
        .catch(function () { clearInterval(timer); });
    }, 1000);
  }

  var COLOURS = ["#047857", "#1d4ed8", "#b91c1c", "#92400e", "#6b21a8", "#374151"];

  function charts() {
    if (typeof uPlot === "undefined") return;
    document.querySelectorAll("[data-chart]").forEach(function (figure) {
      var data = JSON.parse(figure.querySelector("script[type='application/json']").textContent);
      var target = figure.querySelector(".chart");
      var width = Math.max(260, target.clientWidth || 600);
      var series = [{}].concat(data.series.map(function (name, index) {
        return { label: name, stroke: COLOURS[index % COLOURS.length], width: 2, fill: data.bars ? COLOURS[index % COLOURS.length] + "33" : undefined };
      }));
      var options = {
        width: width,
        height: 220,
        series: series,
        scales: { x: { time: true } },
        axes: [{}, { size: 50 }],
      };
      if (data.bars && uPlot.paths && uPlot.paths.bars) {
        options.series.forEach(function (entry, index) { if (index > 0) entry.paths = uPlot.paths.bars({ size: [0.6, 40] }); });
      }
      target.textContent = "";
      var plot = new uPlot(options, [data.days].concat(data.values), target);
      window.addEventListener("resize", function () { plot.setSize({ width: Math.max(260, target.clientWidth), height: 220 }); });
    });
  }

  onReady(function () {
    uploadForms();
    progress();
    charts();
  });
})();
