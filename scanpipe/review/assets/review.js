// Keyboard-first review: every action has a key; the mouse is never needed.
(function () {
  "use strict";
  var forms = [], current = 0, zoom = 1, pendingRule = false;

  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "checkbox") || t.tagName === "SELECT");
  }
  function select(i) {
    if (!forms.length) return;
    current = (i + forms.length) % forms.length;
    forms.forEach(function (f, j) { f.classList.toggle("current", j === current); });
    var contest = forms[current].dataset.contest;
    document.querySelectorAll(".stage rect").forEach(function (r) {
      r.classList.toggle("current", r.dataset.contest === contest);
    });
    forms[current].scrollIntoView({block: "nearest"});
  }
  function setZoom(z) {
    zoom = Math.max(0.5, Math.min(6, z));
    document.querySelectorAll(".stage").forEach(function (s) { s.style.width = (zoom * 100) + "%"; });
  }
  function fitBoxes() {
    document.querySelectorAll(".stage").forEach(function (stage) {
      var img = stage.querySelector("img"), svg = stage.querySelector("svg");
      function fit() { if (img.naturalWidth) svg.setAttribute("viewBox", "0 0 " + img.naturalWidth + " " + img.naturalHeight); }
      if (img.complete) fit(); else img.addEventListener("load", fit);
    });
  }
  function toggleBlind() {
    var on = document.cookie.split("; ").indexOf("sp_blind=1") >= 0;
    document.cookie = "sp_blind=" + (on ? "0" : "1") + "; path=/; SameSite=Strict";
    location.reload();
  }
  function go(id) { var a = document.getElementById(id); if (a) location.href = a.href; }
  function queueRows() { return Array.prototype.slice.call(document.querySelectorAll("#queue-table tbody tr")); }
  function selectRow(i) {
    var rows = queueRows(); if (!rows.length) return;
    current = (i + rows.length) % rows.length;
    rows.forEach(function (r, j) { r.classList.toggle("current", j === current); });
    rows[current].querySelector("a").focus();
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape") { if (document.activeElement) document.activeElement.blur(); pendingRule = false; return; }
    if (typing(e)) return;
    var form = forms[current];
    if (pendingRule && /^[1-9]$/.test(e.key) && form) {
      var sel = form.querySelector("select[name=rule]");
      var n = parseInt(e.key, 10);
      if (sel && n < sel.options.length) sel.selectedIndex = n;
      pendingRule = false; e.preventDefault(); return;
    }
    pendingRule = false;
    if (queueRows().length) {
      if (e.key === "j") { selectRow(current + 1); e.preventDefault(); }
      else if (e.key === "k") { selectRow(current - 1); e.preventDefault(); }
      return;
    }
    switch (e.key) {
      case "j": select(current + 1); break;
      case "k": select(current - 1); break;
      case "r": pendingRule = true; break;
      case "t": if (form) form.querySelector("textarea").focus(); break;
      case "Enter": if (form) { form.requestSubmit(); } break;
      case "+": setZoom(zoom * 1.25); break;
      case "-": setZoom(zoom / 1.25); break;
      case "=": setZoom(1); break;
      case "b": toggleBlind(); break;
      case "n": go("next-item"); break;
      case "q": go("back-queue"); go("nav-queue"); break;
      case "?": var h = document.getElementById("help"); if (h) h.open = !h.open; break;
      case "Backspace": go("again"); break;
      default:
        if (/^[0-9]$/.test(e.key) && form) {
          var box = form.querySelector("input[type=checkbox][data-key='" + e.key + "']");
          if (box) box.checked = !box.checked;
        } else { return; }
    }
    e.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    forms = Array.prototype.slice.call(document.querySelectorAll("form.decide"));
    forms.forEach(function (f, i) { f.addEventListener("focusin", function () { if (current !== i) select(i); }); });
    fitBoxes(); select(0);
    document.querySelectorAll(".scroll").forEach(function (s) {
      s.addEventListener("wheel", function (e) { if (e.ctrlKey) { e.preventDefault(); setZoom(zoom * (e.deltaY < 0 ? 1.1 : 1 / 1.1)); } }, {passive: false});
    });
    // one submission per form: a double click sends nothing more (the server refuses it anyway)
    document.querySelectorAll("form").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        if (f.dataset.sent) { e.preventDefault(); return; }
        f.dataset.sent = "1";
      });
    });
  });
})();
