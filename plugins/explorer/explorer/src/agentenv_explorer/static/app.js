document.getElementById("main").textContent = "explorer";
